// The gRPC server of one gateway process (@grpc/grpc-js over node:http2, on Bun and on Deno): the gRPC binding on its
// own port, sharing the gateway's context (its two Redis connections, leases, stream hub). Off unless server.grpcPort
// is set.
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { grpcService } from "./bindings/grpc.ts";
import type { GatewayContext } from "./gateway-context.ts";

export interface GrpcServed {
  readonly port: number;
  /** Stops accepting calls, lets running ones finish for up to `drainMs`, then cuts the rest. */
  stop(drainMs: number): Promise<void>;
}

export async function startGrpcServer(context: GatewayContext, host: string, port: number): Promise<GrpcServed> {
  const { server: config } = context.config;
  const server = new Server({
    // Far larger messages are cut by the library itself; the binding's own cap (server.maxBodyBytes) answers first.
    "grpc.max_receive_message_length": config.maxBodyBytes + 1_048_576,
    // HTTP/2 pings keep idle streams and blocking calls alive through proxies, as SSE keep-alive comments do.
    "grpc.keepalive_time_ms": config.streamKeepaliveSeconds * 1000,
    "grpc.keepalive_timeout_ms": 20_000,
  });
  const { definition, implementation } = grpcService(context);
  server.addService(definition, implementation);
  const address = host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, actual) =>
      error ? reject(error) : resolve(actual),
    );
  });
  return {
    port: bound,
    stop: (drainMs) =>
      new Promise<void>((resolve) => {
        const cut = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, drainMs);
        server.tryShutdown(() => {
          clearTimeout(cut);
          resolve();
        });
      }),
  };
}
