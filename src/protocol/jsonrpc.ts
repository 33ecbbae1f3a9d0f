// The JSON-RPC 2.0 envelope as A2A 1.0 uses it: one request object per POST, responses and the
// error object whose `data` is an array of `@type` details. Which code means what lives elsewhere.

import { type Static, Type } from "@sinclair/typebox";

/** Absent on a notification; `null` only when the request id could not be read. */
export const JsonRpcIdSchema = Type.Union([Type.String(), Type.Number(), Type.Null()]);
export type JsonRpcId = Static<typeof JsonRpcIdSchema>;

/**
 * A single request. `params` is the method's proto request as a JSON object (A2A never uses
 * positional params); batches (a JSON array) are not requests and fail this schema.
 */
export const JsonRpcRequestSchema = Type.Object({
  jsonrpc: Type.Literal("2.0"),
  id: Type.Optional(JsonRpcIdSchema),
  method: Type.String({ minLength: 1 }),
  params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type JsonRpcRequest = Static<typeof JsonRpcRequestSchema>;

/** A ProtoJSON `Any`: `google.rpc.ErrorInfo`, `google.rpc.BadRequest`, … tagged by `@type`. */
export const JsonRpcErrorDetailSchema = Type.Object({
  "@type": Type.String({ minLength: 1 }),
});
export type JsonRpcErrorDetail = Static<typeof JsonRpcErrorDetailSchema>;

/** `data`, when present, is always an array of details, never a bare object. */
export const JsonRpcErrorSchema = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  data: Type.Optional(Type.Array(JsonRpcErrorDetailSchema)),
});
export type JsonRpcError = Static<typeof JsonRpcErrorSchema>;

const Absent = Type.Optional(Type.Never());

/** `result` is method-specific; validate it with the method's result schema. */
export const JsonRpcSuccessResponseSchema = Type.Object({
  jsonrpc: Type.Literal("2.0"),
  id: JsonRpcIdSchema,
  result: Type.Unknown(),
  error: Absent,
});
export type JsonRpcSuccessResponse = Static<typeof JsonRpcSuccessResponseSchema>;

export const JsonRpcErrorResponseSchema = Type.Object({
  jsonrpc: Type.Literal("2.0"),
  id: JsonRpcIdSchema,
  error: JsonRpcErrorSchema,
  result: Absent,
});
export type JsonRpcErrorResponse = Static<typeof JsonRpcErrorResponseSchema>;

/** Exactly one of `result` or `error`. Each SSE `data:` line holds one of these. */
export const JsonRpcResponseSchema = Type.Union([JsonRpcSuccessResponseSchema, JsonRpcErrorResponseSchema]);
export type JsonRpcResponse = Static<typeof JsonRpcResponseSchema>;
