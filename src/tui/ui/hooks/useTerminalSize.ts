// Terminal columns/rows, following resizes; a fixed size (tests) wins.
import { useEffect, useState } from "react";
import { useStdout } from "ink";
import type { TermSize } from "../../state/contexts.tsx";

export function useTerminalSize(fixed?: TermSize): TermSize {
  const { stdout } = useStdout();
  const read = (): TermSize => fixed ?? { columns: stdout.columns || 100, rows: stdout.rows || 30 };
  const [size, setSize] = useState<TermSize>(read);
  useEffect(() => {
    if (fixed) return;
    const onResize = (): void => setSize(read());
    stdout.on("resize", onResize);
    return () => {
      stdout.off("resize", onResize);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [stdout, fixed?.columns, fixed?.rows]);
  return fixed ?? size;
}
