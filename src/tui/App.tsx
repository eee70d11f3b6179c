// Picks the screen on top of the stack; the frame is exactly one row shorter than the terminal
// (Ink clears the whole screen on every frame once output reaches the terminal height).
import type { ReactNode } from "react";
import { Box } from "ink";
import { currentScreen } from "./state/app.ts";
import { useUIState } from "./state/contexts.tsx";
import { Footer } from "./ui/components/Footer.tsx";
import { HelpOverlay } from "./ui/components/HelpOverlay.tsx";
import { Checkpoints } from "./ui/screens/Checkpoints.tsx";
import { Dashboard } from "./ui/screens/Dashboard.tsx";
import { Home } from "./ui/screens/Home.tsx";
import { Launch } from "./ui/screens/Launch.tsx";
import { Timing } from "./ui/screens/Timing.tsx";
import { Transcripts } from "./ui/screens/Transcripts.tsx";

export const FOOTER_ROWS = 2;

/** Rows the frame may use: one less than the terminal, never below a minimum. */
export function frameRows(rows: number): number {
  return Math.max(8, rows - 1);
}

export function App(): ReactNode {
  const state = useUIState();
  const screen = currentScreen(state);
  const rows = frameRows(state.size.rows);
  const bodyRows = rows - FOOTER_ROWS;
  const width = state.size.columns;
  let body: ReactNode;
  if (screen.name === "home") body = <Home rows={bodyRows} width={width} />;
  else if (screen.name === "launch") body = <Launch key={screen.recipe} screen={screen} rows={bodyRows} width={width} />;
  else if (screen.name === "dashboard") body = <Dashboard key={screen.runDir} runDir={screen.runDir} rows={bodyRows} width={width} />;
  else if (screen.name === "transcripts") body = <Transcripts key={screen.runDir} runDir={screen.runDir} step={screen.step} rows={bodyRows} width={width} />;
  else if (screen.name === "timing") body = <Timing key={screen.runDir} runDir={screen.runDir} step={screen.step} rows={bodyRows} width={width} />;
  else body = <Checkpoints key={screen.runDir} runDir={screen.runDir} rows={bodyRows} width={width} />;
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
          <HelpOverlay screen={screen.name} rows={bodyRows} width={width} />
        </Box>
      ) : null}
      <Footer screen={screen.name} width={width} />
    </Box>
  );
}
