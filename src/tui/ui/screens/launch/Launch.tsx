// Launch: a form generated from the recipe's zod schema (defaults filled, descriptions shown,
// values checked as typed, fields under the schema's groups, `/` filters them by name), the log
// path and what to do if it exists; launching starts the recipe in the background and opens its
// dashboard.
import { type ReactNode, useEffect, useMemo, useReducer, useState } from "react";
import { join } from "node:path";
import { Box, Text } from "ink";
import { loadRecipe, parseConfigArgs } from "../../../../config/index.ts";
import { fit } from "../../../core/format.ts";
import { theme } from "../../../core/palette.ts";
import { windowStart } from "../../../core/textEdit.ts";
import { useServices, useUIActions } from "../../../state/contexts.tsx";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import type { LaunchCommand } from "./launchKeys.ts";
import { FormRowView } from "./FormRowView.tsx";
import { type LaunchForm, formArgs, formProblem, formRows, logPathExists, makeForm } from "./launchForm.ts";
import { handlesBack, initialLaunch, launchReducer } from "./launchState.ts";
import type { RouteOf } from "../../../state/routes.ts";

export type LaunchRoute = RouteOf<"launch">;

export function Launch({ route, rows, width }: { route: LaunchRoute; rows: number; width: number }): ReactNode {
  const services = useServices();
  const actions = useUIActions();
  const [s, dispatch] = useReducer(launchReducer, initialLaunch);
  const { form, editing } = s;

  useEffect(() => {
    let live = true;
    loadRecipe(services.recipes, route.recipe).then(
      (r) => live && dispatch({ type: "loaded", form: makeForm(r.name, r.configSchema, route.logPath ?? join(services.logRoot, r.name), route.preset) }),
      (err: Error) => live && dispatch({ type: "failed", error: err.message }),
    );
    return () => {
      live = false;
    };
  }, [route.recipe, route.logPath, route.preset, services]);

  const [estimate, setEstimate] = useState<{ text: string; error?: boolean } | undefined>(undefined);

  /** The form's config measured for a few steps in a scratch directory (src/estimate), shown under the form. */
  const runEstimate = (f: LaunchForm): void => {
    const problem = formProblem(f);
    if (problem) return actions.error(`cannot estimate: ${problem}`);
    setEstimate({ text: "estimate: measuring a few steps of this config…" });
    void (async () => {
      try {
        const recipe = await loadRecipe(services.recipes, f.recipe);
        const args = formArgs(f);
        const config = parseConfigArgs(recipe.configSchema, args) as Record<string, unknown>;
        const { measureEstimate } = await import("../../../../estimate/estimateRun.ts");
        const e = await measureEstimate(f.recipe, args, config);
        const wall = e.wallSeconds === null ? "?" : e.wallSeconds < 90 ? `${e.wallSeconds.toFixed(0)} s` : `${(e.wallSeconds / 60).toFixed(1)} min`;
        const cost = e.costUsd !== undefined ? ` · ≈ $${e.costUsd.toFixed(2)}` : "";
        setEstimate({
          text: `estimate: ${e.steps ?? "?"} steps × ${e.stepSeconds?.toFixed(2) ?? "?"} s ≈ ${wall} · ${e.tokensPerStep === null ? "?" : Math.round(e.tokensPerStep)} tokens/step${cost}`,
        });
      } catch (err) {
        setEstimate({ text: `estimate failed: ${(err as Error).message}`, error: true });
      }
    })();
  };

  const logPath = form?.logPath;
  const existing = useMemo(() => (logPath === undefined ? false : logPathExists(logPath)), [logPath]);
  const rowsList = form ? formRows(form, existing) : [];
  const row = rowsList[Math.min(s.cursor, rowsList.length - 1)];

  const launch = (f: LaunchForm): void => {
    const problem = formProblem(f);
    if (problem) return actions.error(`cannot launch: ${problem}`);
    services.processes.launch({ recipe: f.recipe, args: formArgs(f), logPath: f.logPath, ifExists: f.ifExists }).then(
      (res) => {
        actions.info(`launched ${f.recipe} (pid ${res.pid}) → ${res.logDir}`);
        actions.replace({ name: "dashboard", runDir: res.logDir });
      },
      (err: Error) => actions.error(err.message),
    );
  };

  useScreenKeys<LaunchCommand>({
    capturing: editing !== undefined || s.filtering,
    onRaw: (input, key) => dispatch(s.filtering ? { type: "filterKey", input, key, existing } : { type: "type", input, key }),
    onCommand: (cmd) => {
      if (!form) return false;
      if (cmd === "back") {
        if (!handlesBack(s)) return false;
        dispatch({ type: "clearFilter" });
      } else if (cmd === "filter") dispatch({ type: "startFilter" });
      else if (cmd === "nextPane") dispatch({ type: "nextGroup", existing });
      else if (cmd === "submit" || (cmd === "open" && row?.kind === "launch")) launch(form);
      else if (cmd === "estimate") runEstimate(form);
      else if (cmd === "open" && row) dispatch({ type: "activate", row });
      else if (["up", "down", "top", "bottom", "pageUp", "pageDown"].includes(cmd))
        dispatch({ type: "move", cmd, count: rowsList.length, page: Math.max(1, rows - 6) });
      else return false;
      return true;
    },
  });

  if (s.loadError) return <Text color={theme.error}>{`could not load ${route.recipe}: ${s.loadError}`}</Text>;
  if (!form) return <Text color={theme.muted}>{`loading ${route.recipe}…`}</Text>;

  const label = Math.min(34, Math.max(12, ...form.fields.map((f) => f.path.length)) + 2);
  const value = Math.min(40, Math.max(16, Math.floor(width * 0.3)));
  const widths = { label, value, desc: Math.max(0, width - label - value - 4) };
  const listRows = Math.max(3, rows - 5 - (estimate ? 1 : 0) - (s.filtering || form.filter ? 1 : 0));
  const start = windowStart(s.cursor, rowsList.length, listRows);
  const problem = formProblem(form);
  const selected = row?.field;
  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text bold color={theme.accent}>{`Launch ${form.recipe}`}</Text>
        <Text color={theme.muted}>{`  engine ${services.engineLabel}  ·  enter edits/cycles/folds, / filters, ctrl+s launches, e estimates`}</Text>
      </Text>
      {s.filtering || form.filter ? (
        <Text color={theme.accent} wrap="truncate">
          {fit(
            `/ ${form.filter}${s.filtering ? "▏" : ""}  (${rowsList.filter((r) => r.kind === "field").length} of ${form.fields.length} fields${s.filtering ? "; enter keeps, esc clears" : "; esc clears"})`,
            width,
          )}
        </Text>
      ) : null}
      {rowsList.slice(start, start + listRows).map((r, i) => (
        <FormRowView
          key={r.kind === "field" ? r.field!.path : r.kind === "group" ? `group:${r.group!.group}` : r.kind}
          form={form}
          row={r}
          selected={start + i === s.cursor}
          editing={start + i === s.cursor ? editing?.text : undefined}
          problem={problem}
          widths={widths}
        />
      ))}
      <Text color={theme.muted} wrap="truncate">
        {fit(selected?.description ? `${selected.path}: ${selected.description}` : "", width)}
      </Text>
      <Text color={problem ? theme.error : theme.ok} wrap="truncate">
        {fit(problem ? `✗ ${problem}` : `✓ ready: cookbook run ${form.recipe} ${formArgs(form).join(" ")}`, width)}
      </Text>
      {estimate ? (
        <Text color={estimate.error ? theme.error : theme.accent} wrap="truncate">
          {fit(estimate.text, width)}
        </Text>
      ) : null}
    </Box>
  );
}
