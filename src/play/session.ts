// Playing an environment by hand: a person takes the policy's seat. The observation is shown as the
// model receives it (the rendered tokens decoded, special tokens and all); what the person types is
// encoded and ended with the renderer's stop sequence, exactly as a sampled action would be, and
// goes through the environment's own parsing, tools, rewards and episode end. For environment
// authors: the quickest way to see what the policy sees and how each reply is scored.
import type { Tokenizer } from "../tokenizers/types.ts";
import type { StopCondition } from "../completers.ts";
import type { Env, EnvGroupBuilder, Metrics, RLDatasetBuilder, Trajectory, Transition } from "../rl/types.ts";
import { InitialObservationOverflow } from "../rl/types.ts";
import { modelInputToInts } from "../tinker/modelInput.ts";
import { messageText } from "../renderers/policyRenderer.ts";

export interface PlayStep {
  reward: number;
  done: boolean;
  metrics: Metrics;
  /** What the environment added since the person's action (its reply and the next prompt). */
  newObservationText: string;
  /** When the episode ended: what the environment said after the reply (a game's result, the tests' outcomes), else null. */
  closing: string | null;
}

export interface PlaySummary {
  turns: number;
  stepRewards: number;
  /** The group reward of a one-trajectory group, when the environment gives one. */
  groupReward: number | null;
  total: number;
}

/**
 * A group whose environments need each other (the seats of a self-play game, each waiting for the
 * other's move) names one a person can play alone, against a fixed opponent.
 */
interface SoloPlayable {
  makePlayEnv(): Promise<Env>;
}

function hasPlayEnv(builder: EnvGroupBuilder): builder is EnvGroupBuilder & SoloPlayable {
  return typeof (builder as Partial<SoloPlayable>).makePlayEnv === "function";
}

/** The environment a person plays in batch `batch`, group `group` of the recipe's training set (the group's first, unless it names one). */
export async function firstEnv(builder: RLDatasetBuilder, batch = 0, group = 0): Promise<{ env: Env; groupBuilder: EnvGroupBuilder }> {
  const { train } = await builder.build();
  if (batch < 0 || batch >= train.length) throw new Error(`batch ${batch} is out of range: the training set has ${train.length} batches`);
  const groups = train.getBatch(batch);
  const groupBuilder = groups[group];
  if (groupBuilder === undefined) throw new Error(`group ${group} is out of range: batch ${batch} has ${groups.length} groups`);
  const env = hasPlayEnv(groupBuilder) ? await groupBuilder.makePlayEnv() : (await groupBuilder.makeEnvs())[0];
  if (env === undefined) throw new Error(`group ${group} of batch ${batch} made no environment`);
  return { env, groupBuilder };
}

export class PlaySession {
  private tokens: number[] = [];
  private stop: StopCondition = [];
  private readonly transitions: Transition[] = [];
  done = false;

  private constructor(
    readonly env: Env,
    readonly groupBuilder: EnvGroupBuilder,
    readonly tokenizer: Tokenizer,
  ) {}

  /** Starts an episode; throws when the first observation does not fit the context. */
  static async start(env: Env, groupBuilder: EnvGroupBuilder, tokenizer: Tokenizer): Promise<PlaySession> {
    const session = new PlaySession(env, groupBuilder, tokenizer);
    const first = await env.initialObservation();
    if (first instanceof InitialObservationOverflow) throw new Error(`the first observation does not fit the context (reward ${first.reward})`);
    session.tokens = modelInputToInts(first.observation);
    session.stop = first.stopCondition;
    return session;
  }

  /** The whole observation as the model receives it, special tokens visible. */
  observationText(): string {
    return this.tokenizer.decode(this.tokens, { skipSpecialTokens: false });
  }

  /** The tokens a typed reply becomes: the text, then the stop sequence the model would end with. */
  actionTokens(text: string): number[] {
    const tokens = this.tokenizer.encode(text, { addSpecialTokens: false });
    const first = this.stop[0];
    if (typeof first === "number") return [...tokens, first];
    if (typeof first === "string") return [...tokens, ...this.tokenizer.encode(first, { addSpecialTokens: false })];
    return tokens;
  }

  async act(text: string): Promise<PlayStep> {
    if (this.done) throw new Error("the episode is over");
    const action = this.actionTokens(text);
    const ob = { chunks: [{ type: "encoded_text" as const, tokens: [...this.tokens] }] };
    const result = await this.env.step(action, { stopReason: "stop" });
    this.transitions.push({
      ob,
      ac: { tokens: action, logprobs: action.map(() => 0), stopReason: "stop" },
      reward: result.reward,
      episodeDone: result.episodeDone,
      metrics: result.metrics ?? {},
      logs: result.logs ?? {},
      ...(result.messages !== undefined ? { messages: result.messages } : {}),
    });
    const next = modelInputToInts(result.nextObservation);
    // What is new: after the previous observation and the reply when the conversation grew by
    // appending, else after the longest prefix the two observations share (an environment that
    // rewrites its prompt, e.g. replaying the history under other role names).
    const withReply = [...this.tokens, ...action];
    let shared = 0;
    while (shared < next.length && shared < withReply.length && next[shared] === withReply[shared]) shared++;
    const newTokens = next.slice(shared);
    this.tokens = next;
    this.stop = result.nextStopCondition;
    this.done = result.episodeDone;
    const lastReply = result.messages?.map((m) => m.role).lastIndexOf("assistant") ?? -1;
    const after = result.episodeDone && lastReply >= 0 ? result.messages!.slice(lastReply + 1) : [];
    const closing = after.length === 0 ? null : after.map((m) => `${m.role}${m.name ? ` (${m.name})` : ""}: ${messageText(m)}`).join("\n");
    return {
      reward: result.reward,
      done: result.episodeDone,
      metrics: result.metrics ?? {},
      newObservationText: this.tokenizer.decode(newTokens, { skipSpecialTokens: false }),
      closing,
    };
  }

  /** Step rewards so far plus, once the episode is over, the group reward of this one trajectory. */
  async summary(): Promise<PlaySummary> {
    const stepRewards = this.transitions.reduce((s, t) => s + t.reward, 0);
    let groupReward: number | null = null;
    if (this.done) {
      const trajectory: Trajectory = {
        transitions: this.transitions,
        finalOb: { chunks: [{ type: "encoded_text", tokens: this.tokens }] },
        stopReason: "completed",
      };
      try {
        groupReward = (await this.groupBuilder.computeGroupRewards([trajectory], [this.env]))[0]?.reward ?? null;
      } catch {
        // Group rewards that compare several trajectories (tournaments) have nothing to compare.
        groupReward = null;
      }
    }
    return { turns: this.transitions.length, stepRewards, groupReward, total: stepRewards + (groupReward ?? 0) };
  }
}
