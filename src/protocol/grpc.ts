// The gRPC wire of A2A 1.0: the methods of lf.a2a.v1.A2AService as proto/a2a.proto declares them, each message read
// from protobuf binary into its ProtoJSON form (the form every binding hands the operations) and written back, and the
// google.rpc.Status of an error with its details (ErrorInfo, BadRequest, RetryInfo) as `grpc-status-details-bin`
// carries it. Messages are read with @bufbuild/protobuf against the descriptor set compiled from the served proto.
import {
  createFileRegistry,
  type DescMessage,
  fromBinary,
  fromJson,
  type JsonValue,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, base64Decode, WireType } from "@bufbuild/protobuf/wire";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { A2A_DESCRIPTOR_SET_BASE64 } from "./a2a-descriptor.ts";
import type { DescribedError, ErrorDetail } from "./error-table.ts";
import { InvalidRequestError } from "./errors.ts";
import { type A2aMethod, isA2aMethod } from "./validate.ts";

/** The served gRPC service's full name. */
export const A2A_GRPC_SERVICE = "lf.a2a.v1.A2AService";

/** One method of the service: its A2A name, its HTTP/2 path, whether it streams, and its messages. */
export interface GrpcMethod {
  readonly name: A2aMethod;
  /** `/lf.a2a.v1.A2AService/<name>` */
  readonly path: string;
  readonly serverStreaming: boolean;
  readonly input: DescMessage;
  readonly output: DescMessage;
  /** The field number of the request's `tenant`, when it has one. */
  readonly tenantField: number | undefined;
}

const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, base64Decode(A2A_DESCRIPTOR_SET_BASE64)));

function methods(): GrpcMethod[] {
  const service = registry.getService(A2A_GRPC_SERVICE);
  if (!service) throw new Error(`${A2A_GRPC_SERVICE} is not in the descriptor set`);
  return service.methods.map((method) => {
    if (!isA2aMethod(method.name)) throw new Error(`${method.name} is not an A2A 1.0 method`);
    return {
      name: method.name,
      path: `/${service.typeName}/${method.name}`,
      serverStreaming: method.methodKind === "server_streaming",
      input: method.input,
      output: method.output,
      tenantField: method.input.fields.find((field) => field.name === "tenant")?.number,
    };
  });
}

/** Every method of lf.a2a.v1.A2AService, in the proto's order. */
export const GRPC_METHODS: readonly GrpcMethod[] = methods();

/**
 * The `tenant` of a request message read from its top-level fields alone (nested messages are skipped, not decoded),
 * so that the profile it names is known before the message is decoded; "" when absent or unreadable.
 */
export function peekTenant(method: GrpcMethod, bytes: Uint8Array): string {
  if (method.tenantField === undefined) return "";
  let tenant = "";
  try {
    const reader = new BinaryReader(bytes);
    while (reader.pos < reader.len) {
      const [field, wireType] = reader.tag();
      if (field === method.tenantField && wireType === WireType.LengthDelimited) tenant = reader.string();
      else reader.skip(wireType, field);
    }
  } catch {
    // A malformed message: decoding it says what is wrong.
  }
  return tenant;
}

/** A request message as ProtoJSON; InvalidRequestError (INVALID_ARGUMENT) when the bytes are not that message. */
export function decodeRequest(method: GrpcMethod, bytes: Uint8Array): JsonValue {
  try {
    return toJson(method.input, fromBinary(method.input, bytes));
  } catch (error) {
    const why = error instanceof Error ? `: ${error.message}` : "";
    throw new InvalidRequestError(`The request is not a valid ${method.input.typeName} message${why}`);
  }
}

/** A ProtoJSON message of type `schema` in binary (an operation's result, or a stream's event). */
export function encodeMessage(schema: DescMessage, json: unknown): Uint8Array {
  return toBinary(schema, fromJson(schema, (json ?? {}) as JsonValue));
}

function encodeAny(typeUrl: string, value: Uint8Array): Uint8Array {
  const writer = new BinaryWriter();
  writer.tag(1, WireType.LengthDelimited).string(typeUrl);
  writer.tag(2, WireType.LengthDelimited).bytes(value);
  return writer.finish();
}

function strings(value: unknown): [string, string][] {
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string");
}

/** google.rpc.ErrorInfo, BadRequest or RetryInfo in binary; undefined for another type. */
function encodeDetail(detail: ErrorDetail): Uint8Array | undefined {
  const writer = new BinaryWriter();
  switch (detail["@type"].slice(detail["@type"].lastIndexOf("/") + 1)) {
    case "google.rpc.ErrorInfo":
      writer.tag(1, WireType.LengthDelimited).string(String(detail.reason ?? ""));
      writer.tag(2, WireType.LengthDelimited).string(String(detail.domain ?? ""));
      for (const [key, value] of strings(detail.metadata)) {
        writer.tag(3, WireType.LengthDelimited).fork();
        writer.tag(1, WireType.LengthDelimited).string(key).tag(2, WireType.LengthDelimited).string(value);
        writer.join();
      }
      return writer.finish();
    case "google.rpc.BadRequest":
      for (const violation of (detail.fieldViolations ?? []) as { field: string; description: string }[]) {
        writer.tag(1, WireType.LengthDelimited).fork();
        writer.tag(1, WireType.LengthDelimited).string(violation.field);
        writer.tag(2, WireType.LengthDelimited).string(violation.description);
        writer.join();
      }
      return writer.finish();
    case "google.rpc.RetryInfo": {
      // retry_delay: a google.protobuf.Duration; the table writes it in ProtoJSON form ("5s").
      const seconds = Number.parseInt(String(detail.retryDelay ?? "0"), 10);
      writer.tag(1, WireType.LengthDelimited).fork().tag(1, WireType.Varint).int64(seconds).join();
      return writer.finish();
    }
    default:
      return undefined;
  }
}

/** The google.rpc.Status of an error, in binary: the value of the `grpc-status-details-bin` trailer. */
export function encodeStatus(code: number, described: DescribedError): Uint8Array {
  const writer = new BinaryWriter();
  writer.tag(1, WireType.Varint).int32(code);
  writer.tag(2, WireType.LengthDelimited).string(described.message);
  for (const detail of described.details) {
    const value = encodeDetail(detail);
    if (value !== undefined) writer.tag(3, WireType.LengthDelimited).bytes(encodeAny(detail["@type"], value));
  }
  return writer.finish();
}
