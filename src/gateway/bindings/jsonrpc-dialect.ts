// What sets one A2A version's JSON-RPC apart from another's on the same endpoint: its method names and params (read
// into the 1.0 call the operations take), and how it writes results and stream events. The envelope, the request
// steps, the operations and the error table are shared. This file holds the interface and the 1.0 dialect.
import {
  type A2aCall,
  type A2aMethod,
  checkParams,
  InvalidParamsError,
  isA2aMethod,
  isV03Method,
  MethodNotFoundError,
  type StreamResponse,
  V03_METHODS,
  type Violation,
} from "../../protocol/index.ts";
import type { ServedVersion } from "../request-steps.ts";

export interface JsonRpcDialect {
  readonly version: ServedVersion;
  /**
   * The call a request names: its 1.0 method and checked params (ProtoJSON-read, proto fields only). Throws
   * MethodNotFoundError, InvalidParamsError, or VersionNotSupportedError for a method of another version.
   */
  read(method: string, params: unknown): A2aCall;
  /** A unary method's result as this dialect answers it. */
  result(method: A2aMethod, result: unknown): unknown;
  /** The `result` of one SSE event; `final` is true when the stream closes after it. */
  event(event: StreamResponse, final: boolean): unknown;
  /**
   * True when a streaming method's operation failure (one the error table answers with HTTP 200) is sent as a stream
   * of one error event rather than a plain JSON answer, because that is where this version's clients look for it.
   */
  readonly streamsFailures: boolean;
}

/** ": <first violation>", for an error message. */
export function summary(violations: readonly Violation[]): string {
  const first = violations[0];
  if (!first) return "";
  return `: ${first.field === "" ? "" : `${first.field}: `}${first.description}`;
}

/** Throws the -32602 of params that failed their check. */
export function invalidParams(violations: Violation[]): never {
  throw new InvalidParamsError(`Invalid params${summary(violations)}`, violations);
}

export const V1_DIALECT: JsonRpcDialect = {
  version: "1.0",
  read(method, params) {
    if (!isA2aMethod(method)) {
      if (!isV03Method(method)) throw new MethodNotFoundError(method);
      const v1 = V03_METHODS[method];
      throw new MethodNotFoundError(
        method,
        `it is the A2A 0.3 name of ${v1}: call ${v1}, or send no A2A-Version header to speak 0.3`,
      );
    }
    const checked = checkParams(method, params);
    if (!checked.ok) invalidParams(checked.violations);
    return { method, params: checked.value } as A2aCall;
  },
  result: (_method, result) => result,
  event: (event) => event,
  streamsFailures: false,
};
