// Safetensors reading and writing for the embedded engine.
export { SafetensorsError, readSafetensors, readSafetensorsHeader } from "./reader.ts";
export type { ReadPath, SafetensorsEntry, SafetensorsHeader, Tensor, TensorValues } from "./reader.ts";
export { writeSafetensors } from "./writer.ts";
export type { TensorToWrite, WriteOptions } from "./writer.ts";
export { INDEX_FILE, SINGLE_FILE, modelWeightFiles, readModelSafetensors, readModelSafetensorsResident, writeModelSafetensors } from "./directory.ts";
export { readSafetensorsResident, type ResidentTensor } from "./resident.ts";
export { bf16ToFloat32, f16ToFloat32, float32ToBf16, float32ToF16 } from "./dtypes.ts";
