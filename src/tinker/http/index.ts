// The HTTP engine: a Tinker protocol client. Only the engine factory (src/service.ts) imports it.
export { HttpServiceClient } from "./serviceClient.ts";
export { HttpTrainingClient } from "./trainingClient.ts";
export { HttpSamplingClient } from "./samplingClient.ts";
export { HttpRestClient } from "./restClient.ts";
export { DEFAULT_BASE_URL, type HttpClientOptions, type Logger } from "./options.ts";
export { systemClock, type Clock } from "./clock.ts";
export { encodeForwardBackwardRequest, decodeForwardBackwardOutput, decodeSampleResponse } from "./proto/messages.ts";
