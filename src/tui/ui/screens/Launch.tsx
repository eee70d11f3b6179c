// Launch: a form generated from the recipe's zod schema (defaults filled, descriptions shown,
// values checked as typed), the log path and what to do if it exists; launching starts the recipe
// in the background and opens its dashboard.
import { type ReactNode, useEffect, useState } from "react";
import { join } from "node:path";
import { Box, Text } from "ink";
import { loadRecipe } from "../../../config/index.ts";
import { fit } from "../../core/format.ts";
import { theme } from "../../core/palette.ts";
import type { Screen } from "../../state/app.ts";
import { useServices, useUIActions } from "../../state/contexts.tsx";
import { editText, moveCursor, windowStart } from "../hooks/textEdit.ts";
import { useScreenKeys } from "../hooks/useScreenKeys.ts";
import {
  IF_EXISTS_CHOICES,
  type LaunchForm,
  cycleOption,
  fieldError,
  formArgs,
  formProblem,
  formRows,
  makeForm,
} from "./launchForm.ts";

type LaunchScreen = Extract<Screen, { name: "launch" }>;

export function Launch({ screen, rows, width }: { screen: LaunchScreen; rows: number; width: number }): ReactNode {
  const services = useServices();
  const actions = useUIActions();
  const [form, setForm] = useState<LaunchForm | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [cursor, setCursor] = useState(0);
  const [editing, setEditing] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    loadRecipe(services.recipes, screen.recipe).then(
      (r) => live && setForm(makeForm(r.name, r.configSchema, screen.logPath ?? join(services.logRoot, r.name), screen.preset)),
      (err: Error) => live && setLoadError(err.message),
    );
    return () => {
      live = false;
    };
  }, [screen.recipe, screen.logPath, screen.preset, services]);

  const rowsList = form ? formRows(form) : [];
  const row = rowsList[Math.min(cursor, rowsList.length - 1)];

  const launch = (f: LaunchForm): void => {
    const problem = formProblem(f);
    if (problem) {
      actions.error(`cannot launch: ${problem}`);
      return;
    }
    try {
      const res = services.processes.launch({ recipe: f.recipe, args: formArgs(f), logPath: f.logPath, ifExists: f.ifExists });
      actions.info(`launched ${f.recipe} (pid ${res.pid}) → ${res.logDir}`);
      actions.replace({ name: "dashboard", runDir: res.logDir });
    } catch (err) {
      actions.error((err as Error).message);
    }
  };

  const commitEdit = (text: string): void => {
    if (!form || !row) return;
    if (row.kind === "logPath") setForm({ ...form, logPath: text });
    else if (row.field) setForm({ ...form, values: { ...form.values, [row.field.path]: text } });
  };

  useScreenKeys({
    capturing: editing !== undefined,
    onRaw: (input, key) => {
      if (editing === undefined) return;
      if (key.escape) setEditing(undefined);
      else if (key.return) {
        commitEdit(editing);
        setEditing(undefined);
      } else setEditing(editText(editing, input, key));
    },
    onCommand: (cmd) => {
      if (!form) return false;
      const moved = moveCursor(cmd, cursor, rowsList.length, Math.max(1, rows - 6));
      if (moved !== undefined) {
        setCursor(moved);
        return true;
      }
      if (cmd === "submit") {
        launch(form);
        return true;
      }
      if (cmd === "open" && row) {
        if (row.kind === "launch") launch(form);
        else if (row.kind === "ifExists") {
          setForm({ ...form, ifExists: IF_EXISTS_CHOICES[(IF_EXISTS_CHOICES.indexOf(form.ifExists) + 1) % IF_EXISTS_CHOICES.length] });
        } else if (row.kind === "logPath") setEditing(form.logPath);
        else if (row.field) {
          const next = cycleOption(row.field, form.values[row.field.path]);
          if (next !== undefined) setForm({ ...form, values: { ...form.values, [row.field.path]: next } });
          else setEditing(form.values[row.field.path]);
        }
        return true;
      }
      return false;
    },
  });

  if (loadError) return <Text color={theme.error}>{`could not load ${screen.recipe}: ${loadError}`}</Text>;
  if (!form) return <Text color={theme.muted}>{`loading ${screen.recipe}…`}</Text>;

  const labelW = Math.min(34, Math.max(12, ...form.fields.map((f) => f.path.length)) + 2);
  const valueW = Math.min(40, Math.max(16, Math.floor(width * 0.3)));
  const descW = Math.max(0, width - labelW - valueW - 4);
  const listRows = Math.max(3, rows - 5);
  const start = windowStart(cursor, rowsList.length, listRows);
  const problem = formProblem(form);
  const selected = row?.field;

  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text bold color={theme.accent}>{`Launch ${form.recipe}`}</Text>
        <Text color={theme.muted}>{`  engine ${services.engineLabel}  ·  enter edits/cycles, ctrl+s launches`}</Text>
      </Text>
      {rowsList.slice(start, start + listRows).map((r, i) => {
        const idx = start + i;
        const sel = idx === cursor;
        const isEditing = sel && editing !== undefined;
        if (r.kind === "launch") {
          return (
            <Text key="launch" inverse={sel} color={problem ? theme.muted : theme.ok}>
              {`${sel ? "›" : " "} [ Launch ${form.recipe} in the background ]`}
            </Text>
          );
        }
        if (r.kind === "ifExists") {
          return (
            <Text key="ifExists" inverse={sel} wrap="truncate">
              {`${sel ? "›" : " "} ${fit("if it exists", labelW)} `}
              <Text color={theme.warn}>{fit(form.ifExists, valueW)}</Text>
              <Text color={theme.muted}>{fit(" log path holds a run: new name / resume it / delete it (enter cycles)", descW)}</Text>
            </Text>
          );
        }
        const text = r.kind === "logPath" ? form.logPath : form.values[r.field!.path];
        const shown = isEditing ? `${editing}▏` : text;
        const err = r.field ? fieldError(r.field, isEditing ? editing : text) : undefined;
        const label = r.kind === "logPath" ? "log path" : r.field!.path;
        const desc = r.kind === "logPath" ? "run directory (metrics, checkpoints, logs)" : `${r.field!.description ?? ""} (${r.field!.type})`;
        return (
          <Text key={label} inverse={sel && !isEditing} wrap="truncate">
            {`${sel ? "›" : " "} ${fit(label, labelW)} `}
            <Text color={err ? theme.error : isEditing ? theme.accent : undefined}>{fit(shown, valueW)}</Text>
            <Text color={theme.muted}>{` ${fit(desc, descW)}`}</Text>
          </Text>
        );
      })}
      <Text color={theme.muted} wrap="truncate">
        {fit(selected?.description ? `${selected.path}: ${selected.description}` : "", width)}
      </Text>
      <Text color={problem ? theme.error : theme.ok} wrap="truncate">
        {fit(problem ? `✗ ${problem}` : `✓ ready: cookbook run ${form.recipe} ${formArgs(form).join(" ")}`, width)}
      </Text>
    </Box>
  );
}
