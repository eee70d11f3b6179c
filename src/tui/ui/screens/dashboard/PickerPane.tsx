// The metric / overlay picker under the charts: a filterable checklist.
import type { ReactNode } from "react";
import { basename } from "node:path";
import { Box, Text } from "ink";
import { theme } from "../../../core/palette.ts";
import { windowStart } from "../../../core/textEdit.ts";
import type { Picker } from "./dashboardState.ts";

export interface PickerPaneProps {
  picker: Picker;
  items: readonly string[];
  isOn: (item: string) => boolean;
  rows: number;
}

export function PickerPane({ picker, items, isOn, rows }: PickerPaneProps): ReactNode {
  const start = windowStart(picker.cursor, items.length, rows - 1);
  return (
    <Box flexDirection="column" height={rows} borderStyle="single" borderTop borderBottom={false} borderLeft={false} borderRight={false}>
      <Text color={theme.accent} wrap="truncate">
        {`${picker.kind === "metric" ? "metrics" : "overlay runs"} (enter toggles, / filters, esc closes): ${picker.filter}${picker.typing ? "▏" : ""}`}
      </Text>
      {items.slice(start, start + rows - 2).map((item, i) => (
        <Text key={item} inverse={start + i === picker.cursor} wrap="truncate">
          {`${isOn(item) ? "[x]" : "[ ]"} ${picker.kind === "overlay" ? basename(item) : item}`}
        </Text>
      ))}
    </Box>
  );
}
