// The A2A 0.3 dialect of the JSON-RPC endpoint, for requests without A2A-Version (or with 0.3): 0.3 method names and
// params read into 1.0 calls, results and events written back in 0.3 shapes. Translation happens here, at the edge:
// the operations, the journal and everything stored stay 1.0. A 1.0 method name is -32009 saying which header to send.
import {
  isA2aMethod,
  isV03Method,
  MethodNotFoundError,
  readV03Request,
  toV03Event,
  toV03Result,
  VersionHeaderRequiredError,
} from "../../protocol/index.ts";
import { invalidParams, type JsonRpcDialect } from "./jsonrpc-dialect.ts";

/** The versions the JSON-RPC endpoint serves. */
export const JSONRPC_VERSIONS = ["1.0", "0.3"] as const;

export const V03_DIALECT: JsonRpcDialect = {
  version: "0.3",
  read(method, params) {
    if (!isV03Method(method)) {
      if (isA2aMethod(method)) throw new VersionHeaderRequiredError(method, JSONRPC_VERSIONS);
      throw new MethodNotFoundError(method);
    }
    const read = readV03Request(method, params);
    if (!read.ok) invalidParams(read.violations);
    return read.value;
  },
  result: toV03Result,
  event: toV03Event,
  // The 0.3 reference server reports what fails once a stream's handler runs (a missing task, a terminal one) as an
  // SSE error event, and 0.3 clients insist on text/event-stream for the streaming methods.
  streamsFailures: true,
};
