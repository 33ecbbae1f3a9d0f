// The protocol area: A2A 1.0 wire schemas, the method table and its checkers, the JSON-RPC envelope, and the
// transport-neutral errors. It imports nothing of this project; every other area may import it through this file.

export {
  A2A_ERROR_DOMAIN,
  AUTH_REALM,
  type DescribedError,
  describeError,
  type ErrorDetail,
  type ErrorRow,
  errorDomain,
  type GrpcStatus,
  INTERNAL_ROW,
  RUNTIME_ERROR_DOMAIN,
} from "./error-table.ts";
export * from "./errors.ts";
// The gRPC codec (./grpc.ts) is not re-exported: loading it builds protobuf's descriptor registry, about 100 ms of
// every process's start. Only the gRPC binding imports it, and a gateway loads that binding when it serves gRPC.
export {
  type JsonRpcError,
  type JsonRpcErrorDetail,
  JsonRpcErrorDetailSchema,
  type JsonRpcErrorResponse,
  JsonRpcErrorResponseSchema,
  JsonRpcErrorSchema,
  type JsonRpcId,
  JsonRpcIdSchema,
  type JsonRpcRequest,
  JsonRpcRequestSchema,
  type JsonRpcResponse,
  JsonRpcResponseSchema,
  type JsonRpcSuccessResponse,
  JsonRpcSuccessResponseSchema,
} from "./jsonrpc.ts";
export * from "./limits.ts";
export { PROTO_ENUM, type ProtoJsonReader, protoJsonReader, protoName } from "./proto-json.ts";
export * from "./schema/index.ts";
export * from "./v03/index.ts";
export {
  A2A_METHODS,
  A2A_PARAMS_SCHEMAS,
  type A2aCall,
  type A2aMethod,
  type A2aParams,
  type Checker,
  type CheckResult,
  checkJsonRpcRequest,
  checkParams,
  compileChecker,
  isA2aMethod,
  MAX_VIOLATIONS,
  type Violation,
} from "./validate.ts";
