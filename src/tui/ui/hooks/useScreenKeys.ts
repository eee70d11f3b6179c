// Installs the active screen's key handler in the dispatcher, refreshed on every render so it
// always sees the screen's current state. On unmount it removes only its own handler: the next
// screen has already installed one while rendering.
import { useEffect, useRef } from "react";
import { type ScreenKeyHandler, useUIActions } from "../../state/contexts.tsx";

export function useScreenKeys<C extends string>(handler: ScreenKeyHandler<C>): void {
  const { setKeyHandler, releaseKeyHandler } = useUIActions();
  const owner = useRef({}).current;
  setKeyHandler({ ...handler, owner });
  useEffect(() => () => releaseKeyHandler(owner), [releaseKeyHandler, owner]);
}
