// The A2A 0.3 JSON-RPC dialect: its method names, its shapes, and the two translations (0.3 requests to 1.0 calls,
// 1.0 results and events to 0.3). The 0.3 binding alone uses it; everything stored and every operation stays 1.0.
export { isV03Method, V03_METHODS, type V03Method, v03MethodOf } from "./methods.ts";
export { readV03Request } from "./requests.ts";
export {
  toV03CardFields,
  toV03Event,
  toV03Message,
  toV03Part,
  toV03PushConfig,
  toV03Result,
  toV03State,
  toV03Task,
} from "./results.ts";
export * from "./schema.ts";
