// Installs the active screen's key handler in the dispatcher, refreshed on every render so it
// always sees the screen's current state.
import { useEffect } from "react";
import { type ScreenKeyHandler, useUIActions } from "../../state/contexts.tsx";

export function useScreenKeys(handler: ScreenKeyHandler): void {
  const { setKeyHandler } = useUIActions();
  setKeyHandler(handler);
  useEffect(() => () => setKeyHandler(undefined), [setKeyHandler]);
}
