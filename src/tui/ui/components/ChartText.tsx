// Chart lines as one text node that Ink measures cheaply: Ink sees ASCII stand-ins of the same
// width (core/chart.ts asciiStandIn) and the Transform writes the real coloured lines. Memoised so
// a chart whose lines did not change is not re-rendered by React either.
import { type ReactNode, memo, useMemo } from "react";
import { Text, Transform } from "ink";
import { asciiStandIn } from "../../core/chart.ts";

export const ChartText = memo(function ChartText({ lines }: { lines: readonly string[] }): ReactNode {
  const standIn = useMemo(() => {
    const out: string[] = [];
    for (const l of lines) {
      const s = asciiStandIn(l);
      if (s === undefined) return undefined;
      out.push(s);
    }
    return out.join("\n");
  }, [lines]);
  if (standIn === undefined) return <Text>{lines.join("\n")}</Text>;
  return (
    <Transform transform={(_text, index) => lines[index] ?? ""}>
      <Text>{standIn}</Text>
    </Transform>
  );
});
