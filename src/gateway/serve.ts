// The runtime seam: binds a fetch handler to a port with Bun.serve on Bun and Deno.serve on Deno. The only file in the
// gateway that touches a runtime's own API.

export interface ServeOptions {
  fetch(request: Request): Response | Promise<Response>;
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  /** How long a connection may idle, in seconds; must outlast the blocking deadline and the SSE keep-alive. */
  idleTimeoutSeconds: number;
  /** Bodies larger than this are cut by the runtime itself; the gateway's own, smaller limit answers first. */
  maxRequestBodyBytes: number;
}

export interface Served {
  /** The port actually bound. */
  readonly port: number;
  /** Stops listening and closes every open connection. */
  stop(): Promise<void>;
}

interface DenoServer {
  readonly addr: { readonly port: number };
  shutdown(): Promise<void>;
}

interface DenoNamespace {
  serve(
    options: { hostname: string; port: number; onListen?: (addr: { port: number }) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): DenoServer;
}

declare const Deno: DenoNamespace | undefined;

export function serve(options: ServeOptions): Served {
  if (typeof Bun !== "undefined") {
    const server = Bun.serve({
      fetch: options.fetch,
      hostname: options.hostname,
      port: options.port,
      idleTimeout: options.idleTimeoutSeconds,
      maxRequestBodySize: options.maxRequestBodyBytes,
      development: false,
      // Bun sets SO_REUSEPORT unless told not to (with development: false), so a second gateway on a busy port would
      // bind too and share the requests; refusing the port makes that an error at start-up.
      reusePort: false,
    });
    return {
      port: server.port ?? options.port,
      stop: async () => {
        await server.stop(true);
      },
    };
  }
  if (typeof Deno !== "undefined") {
    // Deno has no per-connection idle timeout to raise: its HTTP server does not cut idle requests in flight.
    const server = Deno.serve({ hostname: options.hostname, port: options.port, onListen: () => {} }, options.fetch);
    return {
      port: server.addr.port,
      stop: async () => {
        await server.shutdown();
      },
    };
  }
  throw new Error("a2a-runtime's gateway runs on Bun or Deno");
}
