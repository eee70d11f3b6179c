// Reading a checkpoint for frozen use (LoRA bases, samplers) without materialising float32: every
// BF16 or F16 matrix becomes a HalfArray, a view straight into a read-only memory mapping of the
// file. Nothing is copied and no fresh memory is touched; the pages are the page cache's own and
// fault in when a kernel first reads them. The views keep the mapping alive, and it is unmapped
// when the last of them is garbage-collected. U8 tensors of two or more dimensions (MXFP4 expert
// weights) are mapped views too. Norm weights, biases, F32/F64 and integer tensors are
// read as readSafetensors reads them (float32 copies; small, or not 16-bit to begin with).
import { HalfArray } from "../kernels/halfArray.ts";
import { loadNativeKernels } from "../kernels/native.ts";
import { SafetensorsError, readSafetensors, readSafetensorsHeader, type TensorValues } from "./reader.ts";

export interface ResidentTensor {
  dtype: string;
  shape: number[];
  data: TensorValues | HalfArray;
}

const HALF_DTYPES: Readonly<Record<string, "bf16" | "f16">> = { BF16: "bf16", F16: "f16" };

/**
 * Tensors of one file (all, or only `names`): 16-bit matrices as HalfArray views of the mapping,
 * the rest as readSafetensors returns them. Needs the native addon (it maps the file).
 */
export function readSafetensorsResident(file: string, options: { names?: Iterable<string> } = {}): Map<string, ResidentTensor> {
  const header = readSafetensorsHeader(file);
  const wanted = options.names === undefined ? [...header.entries.keys()] : [...options.names];
  const out = new Map<string, ResidentTensor>();
  const rest: string[] = [];
  let mapping: ArrayBuffer | null = null;
  // A file up to 4 GiB is one mapping shared by its views; a larger one (one ArrayBuffer cannot
  // wrap it) maps each tensor's own bytes.
  const mapped = (offset: number, bytes: number): [ArrayBuffer, number] => {
    if (header.fileSize <= MAX_MAPPED_BYTES) {
      mapping ??= mapWhole(file, header.fileSize);
      return [mapping, offset];
    }
    const start = Math.floor(offset / MAP_ALIGN) * MAP_ALIGN;
    if (offset + bytes - start > MAX_MAPPED_BYTES)
      throw new SafetensorsError(file, `has a tensor of ${bytes} bytes; a resident load maps at most 4 GiB per tensor`);
    return [loadNativeKernels().mapFile(file, start, offset + bytes - start), offset - start];
  };
  for (const name of wanted) {
    const e = header.entries.get(name);
    if (e === undefined) throw new SafetensorsError(file, `has no tensor named ${JSON.stringify(name)}`);
    const dtype = HALF_DTYPES[e.dtype];
    const offset = header.dataStart + e.begin;
    if (e.dtype === "U8" && e.shape.length >= 2) {
      // MXFP4 blocks and scales: bytes read where they lie, as the 16-bit matrices are.
      const [buffer, at] = mapped(offset, e.end - e.begin);
      out.set(name, { dtype: e.dtype, shape: e.shape, data: new Uint8Array(buffer, at, e.end - e.begin) });
      continue;
    }
    // Uint16Array views need an even offset (every real checkpoint has one; else it is read as floats).
    if (dtype === undefined || e.shape.length < 2 || offset % 2 !== 0) {
      rest.push(name);
      continue;
    }
    const [buffer, at] = mapped(offset, e.end - e.begin);
    out.set(name, { dtype: e.dtype, shape: e.shape, data: new HalfArray(dtype, new Uint16Array(buffer, at, (e.end - e.begin) / 2)) });
  }
  if (rest.length > 0) for (const [name, t] of readSafetensors(file, { names: rest })) out.set(name, t);
  return new Map(wanted.map((n) => [n, out.get(n) as ResidentTensor]));
}

/**
 * Node 20's N-API cannot make one ArrayBuffer over more than 4 GiB of mapping (the addon's call
 * fails and node-addon-api then frees its finalizer data twice, aborting the process), so larger
 * files are mapped tensor by tensor, each range starting at a multiple of MAP_ALIGN (a multiple of
 * every page size Linux uses).
 */
const MAX_MAPPED_BYTES = 2 ** 32;
const MAP_ALIGN = 65536;

function mapWhole(file: string, expectedSize: number): ArrayBuffer {
  const buffer = loadNativeKernels().mapFile(file);
  // The header was checked against the size fstat gave a moment ago; a file replaced in between
  // (a checkpoint being rewritten) must not give views past the end of the new one.
  if (buffer.byteLength !== expectedSize) {
    throw new SafetensorsError(file, `changed size while being loaded (${expectedSize} bytes, now ${buffer.byteLength}); is it being written?`);
  }
  return buffer;
}
