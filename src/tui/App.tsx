// Renders the route on top of the stack through the screen registry; the frame is exactly one row
// shorter than the terminal (Ink clears the whole screen on every frame once output reaches the
// terminal height).
import type { ReactNode } from "react";
import { Box, Text } from "ink";
import { theme } from "./core/palette.ts";
import { useRegistry } from "./registryContext.ts";
import { currentScreen } from "./state/app.ts";
import { useUIState } from "./state/contexts.tsx";
import { Footer } from "./ui/components/Footer.tsx";
import { HelpOverlay } from "./ui/components/HelpOverlay.tsx";

export const FOOTER_ROWS = 2;

/** Rows the frame may use: one less than the terminal, never below a minimum. */
export function frameRows(rows: number): number {
  return Math.max(8, rows - 1);
}

export function App(): ReactNode {
  const state = useUIState();
  const registry = useRegistry();
  const route = currentScreen(state);
  const entry = registry.entry(route);
  const rows = frameRows(state.size.rows);
  const bodyRows = rows - FOOTER_ROWS;
  const width = state.size.columns;
  // A new route remounts its screen, so each screen's reducer starts from its route.
  const body = entry ? (
    <entry.component key={JSON.stringify(route)} route={route} rows={bodyRows} width={width} />
  ) : (
    <Text color={theme.error}>{`no screen named ${route.name}`}</Text>
  );
  // Vertical clipping only: a horizontal clip makes Ink re-slice and re-measure every line of
  // every frame (slice-ansi + string-width, the largest cost of a dashboard redraw), while text
  // already wraps or truncates to its box's width.
  return (
    <Box flexDirection="column" width={width} height={rows} overflowY="hidden">
      {/* The screen stays mounted under the help overlay so it keeps its state. */}
      <Box flexDirection="column" height={bodyRows} overflowY="hidden" display={state.help ? "none" : "flex"}>
        {body}
      </Box>
      {state.help ? (
        <Box flexDirection="column" height={bodyRows} overflowY="hidden">
          <HelpOverlay title={route.name} sections={registry.keymap.helpLines(route.name)} rows={bodyRows} width={width} />
        </Box>
      ) : null}
      <Footer hints={registry.keymap.footerHints(route.name, width)} width={width} />
    </Box>
  );
}
