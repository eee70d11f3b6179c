// A weighted mixture of streams, itself a stream (`stream=true` with `mixture=`): the slots of the
// mixed stream and the source each draws from are those of the loaded mixture (interleaveSources
// in src/data/mixture.ts, the same seed and stopping strategy), so only the source of each slot is
// kept (a byte per row) and every CHECKPOINT_SLOTS-th slot's count per source. A range of slots is
// read as one range (or, where a small source repeats, a few) of each source.
import { interleaveSources, MixtureError, type StoppingStrategy } from "../data/mixture.ts";
import { checkReadBack, type ConversationStream, type StreamedConversation } from "./stream.ts";

const CHECKPOINT_SLOTS = 4096;

export interface MixtureMember {
  name: string;
  stream: ConversationStream;
}

export function mixtureStream(
  members: readonly MixtureMember[],
  probabilities: readonly number[],
  seed: number,
  strategy: StoppingStrategy,
): ConversationStream {
  if (members.length > 255) throw new MixtureError(`a streamed mixture takes at most 255 sources, got ${members.length}`);
  const sizes = members.map((m) => m.stream.rows);
  members.forEach((m) => {
    if (m.stream.rows === 0) throw new MixtureError(`mixture source ${m.name} (${m.stream.name}) has no conversations`);
  });
  let slots = new Uint8Array(1 << 16);
  const checkpoints: Float64Array[] = [];
  const taken = new Float64Array(members.length);
  let length = 0;
  for (const source of interleaveSources(sizes, probabilities, seed, strategy)) {
    if (length % CHECKPOINT_SLOTS === 0) checkpoints.push(taken.slice());
    if (length === slots.length) {
      const grown = new Uint8Array(slots.length * 2);
      grown.set(slots);
      slots = grown;
    }
    slots[length] = source;
    taken[source]! += 1;
    length += 1;
  }
  slots = slots.slice(0, length);
  const name = `mixture of ${members.map((m) => m.name).join(", ")}`;

  /** Rows [from, from + n) of a member, wrapping around where a small source repeats. */
  const readMember = async (member: number, from: number, n: number): Promise<StreamedConversation[]> => {
    const { stream, name: source } = members[member]!;
    const out: StreamedConversation[] = [];
    for (let at = from; at < from + n; ) {
      const row = at % stream.rows;
      const count = Math.min(stream.rows - row, from + n - at);
      const rows = await stream.read(row, row + count);
      checkReadBack(stream.name, row, count, rows.length);
      for (const r of rows) out.push({ ...r, source });
      at += count;
    }
    return out;
  };

  const read = async (start: number, end: number): Promise<StreamedConversation[]> => {
    const checkpoint = Math.floor(start / CHECKPOINT_SLOTS);
    const first = checkpoints[checkpoint]!.slice();
    for (let i = checkpoint * CHECKPOINT_SLOTS; i < start; i++) first[slots[i]!]! += 1;
    const counts = new Float64Array(members.length);
    for (let i = start; i < end; i++) counts[slots[i]!]! += 1;
    const rows = await Promise.all(members.map((_, m) => readMember(m, first[m]!, counts[m]!)));
    const next = members.map(() => 0);
    const out: StreamedConversation[] = [];
    for (let i = start; i < end; i++) {
      const m = slots[i]!;
      out.push(rows[m]![next[m]!]!);
      next[m]! += 1;
    }
    return out;
  };
  return { name, rows: length, read };
}
