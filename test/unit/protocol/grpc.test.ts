// The gRPC wire: the served proto is the specification's service (annotations aside) and the descriptor set the
// binding reads is compiled from it (`npm run proto` when these fail); every A2A 1.0 method is served; a request's
// tenant is found without decoding the message; an error's google.rpc.Status reads back with the SDK's own decoder.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { decodeErrorInfo, decodeStatus } from "@a2a-js/sdk/errors/grpc";
import { base64Encode } from "@bufbuild/protobuf/wire";
import {
  compiledDescriptor,
  DESCRIPTOR_MODULE,
  descriptorModule,
  SERVED_PROTO,
  servedProto,
} from "../../../scripts/proto.ts";
import { decodeRequest, encodeMessage, encodeStatus, GRPC_METHODS, peekTenant } from "../../../src/protocol/grpc.ts";
import { A2A_METHODS, CapacityError, describeError, InvalidParamsError } from "../../../src/protocol/index.ts";

const SPEC = new URL("../../support/a2a-proto/a2a.proto", import.meta.url);

describe("the served proto", () => {
  test("is the specification's a2a.proto without its google.api annotations", () => {
    const served = readFileSync(SERVED_PROTO, "utf8");
    expect(served).toBe(servedProto(readFileSync(SPEC, "utf8")));
    expect(served).toContain("package lf.a2a.v1;");
    expect(served).toContain("service A2AService {");
    expect(served).not.toContain("(google.api.");
    expect(served).not.toContain("google/api/");
  });

  test("the embedded descriptor set is compiled from it", () => {
    const built = compiledDescriptor(readFileSync(SERVED_PROTO, "utf8"));
    expect(readFileSync(DESCRIPTOR_MODULE, "utf8")).toBe(descriptorModule(built));
    expect(base64Encode(built).length).toBeGreaterThan(1000);
  });

  test("serves every A2A 1.0 method; the two streaming ones stream", () => {
    expect(GRPC_METHODS.map((method) => method.name).sort()).toEqual([...A2A_METHODS].sort());
    expect(GRPC_METHODS.filter((method) => method.serverStreaming).map((method) => method.name)).toEqual([
      "SendStreamingMessage",
      "SubscribeToTask",
    ]);
    expect(GRPC_METHODS[0]?.path).toBe("/lf.a2a.v1.A2AService/SendMessage");
  });
});

describe("messages", () => {
  const send = GRPC_METHODS.find((method) => method.name === "SendMessage")!;
  const listConfigs = GRPC_METHODS.find((method) => method.name === "ListTaskPushNotificationConfigs")!;

  test("a request reads as ProtoJSON; its tenant is found from the top-level fields", () => {
    const json = {
      tenant: "second",
      message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hi" }], metadata: { nested: [1, { a: null }] } },
      configuration: { returnImmediately: true },
    };
    const bytes = encodeMessage(send.input, json);
    expect(peekTenant(send, bytes)).toBe("second");
    expect(decodeRequest(send, bytes)).toEqual(json);
    // The tenant is field 4 of ListTaskPushNotificationConfigsRequest, field 1 elsewhere.
    expect(peekTenant(listConfigs, encodeMessage(listConfigs.input, { taskId: "t", tenant: "other" }))).toBe("other");
    expect(peekTenant(send, encodeMessage(send.input, { message: json.message }))).toBe("");
  });

  test("bytes that are not the message: INVALID_REQUEST; no tenant is found in them", () => {
    const garbage = new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    expect(peekTenant(send, garbage)).toBe("");
    expect(() => decodeRequest(send, garbage)).toThrow("not a valid lf.a2a.v1.SendMessageRequest");
  });
});

describe("error status", () => {
  test("a refusal: ErrorInfo with reason, domain and metadata, then RetryInfo", () => {
    const described = describeError(new CapacityError("PROFILE_QUOTA_EXCEEDED", "Full", 7, { profile: "p" }));
    const status = decodeStatus(Buffer.from(encodeStatus(14, described)));
    expect(status.code).toBe(14);
    expect(status.message).toBe("Full");
    expect(status.details.map((detail) => detail.typeUrl)).toEqual([
      "type.googleapis.com/google.rpc.ErrorInfo",
      "type.googleapis.com/google.rpc.RetryInfo",
    ]);
    const info = decodeErrorInfo(Buffer.from(status.details[0]!.value));
    expect(info).toMatchObject({ reason: "PROFILE_QUOTA_EXCEEDED", domain: "a2a-runtime", metadata: { profile: "p" } });
    // RetryInfo { retry_delay: Duration { seconds: 7 } }
    expect([...status.details[1]!.value]).toEqual([0x0a, 0x02, 0x08, 0x07]);
  });

  test("bad params: ErrorInfo then BadRequest with each field violation", () => {
    const error = new InvalidParamsError("Invalid params", [{ field: "message", description: "is required" }]);
    const status = decodeStatus(Buffer.from(encodeStatus(3, describeError(error))));
    expect(status.details.map((detail) => detail.typeUrl.split(".").at(-1))).toEqual(["ErrorInfo", "BadRequest"]);
    const text = Buffer.from(status.details[1]!.value).toString("utf8");
    expect(text).toContain("message");
    expect(text).toContain("is required");
  });
});
