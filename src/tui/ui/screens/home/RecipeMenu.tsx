// The recipe menu: name, description and the engine a launch would use.
import type { ReactNode } from "react";
import { Text } from "ink";
import type { RecipeEntry } from "../../../../config/index.ts";
import { fit } from "../../../core/format.ts";
import { theme } from "../../../core/palette.ts";
import { windowStart } from "../../../core/textEdit.ts";

export interface RecipeMenuProps {
  recipes: readonly RecipeEntry[];
  cursor: number;
  active: boolean;
  rows: number;
  width: number;
  engineLabel: string;
}

export function RecipeMenu({ recipes, cursor, active, rows, width, engineLabel }: RecipeMenuProps): ReactNode {
  const start = windowStart(cursor, recipes.length, rows);
  const nameW = Math.min(24, Math.max(8, ...recipes.map((r) => r.name.length)));
  const engineW = Math.min(24, engineLabel.length);
  const descW = Math.max(10, width - nameW - engineW - 6);
  return (
    <>
      <Text bold color={active ? theme.accent : undefined}>
        {`Recipes (${recipes.length})`}
      </Text>
      {recipes.slice(start, start + rows).map((r, i) => {
        const sel = active && start + i === cursor;
        return (
          <Text key={r.name} wrap="truncate" inverse={sel}>
            {`${sel ? "›" : " "} ${fit(r.name, nameW)} ${fit(r.description, descW)} `}
            <Text color={theme.muted}>{fit(engineLabel, engineW)}</Text>
          </Text>
        );
      })}
    </>
  );
}
