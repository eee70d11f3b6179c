// The chart grid: one block (title + chart lines) per metric, in 1 or 2 columns.
import type { ReactNode } from "react";
import { Box, Text } from "ink";
import type { GridLayout } from "../../../core/dashboard.ts";
import { theme } from "../../../core/palette.ts";
import { ChartText } from "../../components/ChartText.tsx";

export interface ChartBlock {
  title: string;
  body: string[];
}

export interface ChartGridProps {
  blocks: readonly ChartBlock[];
  grid: GridLayout;
  colWidth: number;
  height: number;
  /** Shown instead of charts when there are none. */
  empty?: string;
}

export function ChartGrid({ blocks, grid, colWidth, height, empty }: ChartGridProps): ReactNode {
  const gridRows: ChartBlock[][] = [];
  for (let i = 0; i < blocks.length; i += grid.columns) gridRows.push(blocks.slice(i, i + grid.columns));
  return (
    <Box flexDirection="column" height={height} overflowY="hidden">
      {empty !== undefined ? <Text color={theme.muted}>{empty}</Text> : null}
      {gridRows.map((row, r) => (
        <Box key={r} flexDirection="row" height={grid.chartRows}>
          {row.map((block, c) => (
            <Box key={c} flexDirection="column" width={colWidth + (grid.columns > 1 ? 1 : 0)}>
              <Text bold wrap="truncate">
                {block.title}
              </Text>
              {/* One node per chart: lines are already cut to the width, and Ink measures less. */}
              <ChartText lines={block.body} />
            </Box>
          ))}
        </Box>
      ))}
    </Box>
  );
}
