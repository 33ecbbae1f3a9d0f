// The gRPC side of a load: the same JSON-RPC bodies a scenario builds, sent as the A2A method's request message over
// one HTTP/2 channel (as gRPC clients do: calls multiplexed, `concurrency` of them in flight), each answer read back
// into a JSON-RPC-shaped body so that the scenario's own check applies. It only ever dials 127.0.0.1.
import { fromBinary, toJson } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { encodeMessage, GRPC_METHODS } from "../../src/protocol/grpc.ts";
import { isA2aMethod } from "../../src/protocol/index.ts";
import { type DriveOptions, driveLoad, type HttpAnswer, type LoadClient, type LoadResult } from "./http-load.ts";

export interface GrpcLoadOptions extends DriveOptions {
  /** host:port of the gateway's gRPC server. */
  address: string;
  concurrency: number;
  apiKey: string;
}

/** One call: the JSON-RPC body's method and params as the gRPC request; the answer as `{"result": …}`. */
function caller(client: Client, metadata: Metadata): (body: string) => Promise<HttpAnswer> {
  return (body) => {
    const { method: name, params } = JSON.parse(body) as { method: string; params: unknown };
    const method = GRPC_METHODS.find((candidate) => candidate.name === name);
    if (!isA2aMethod(name) || !method || method.serverStreaming) throw new Error(`${name} is not a unary method`);
    const request = Buffer.from(encodeMessage(method.input, params));
    return new Promise((resolve) => {
      client.makeUnaryRequest(
        method.path,
        (bytes: Buffer) => bytes,
        (bytes: Buffer) => bytes,
        request,
        metadata,
        (error: ServiceError | null, bytes?: Buffer) => {
          if (error) resolve({ status: 500, body: `gRPC ${error.code}: ${error.details}` });
          else {
            const result = toJson(method.output, fromBinary(method.output, bytes ?? Buffer.alloc(0)));
            resolve({ status: 200, body: JSON.stringify({ result }) });
          }
        },
      );
    });
  };
}

export async function runGrpcLoad(options: GrpcLoadOptions): Promise<LoadResult> {
  const client = new Client(options.address, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set("authorization", `Bearer ${options.apiKey}`);
  metadata.set("a2a-version", "1.0");
  const send = caller(client, metadata);
  const clients = Array.from({ length: options.concurrency }, (): LoadClient => ({ send, close: () => {} }));
  try {
    return await driveLoad(clients, options);
  } finally {
    client.close();
  }
}
