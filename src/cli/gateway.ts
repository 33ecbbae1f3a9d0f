// `a2a-runtime gateway`: serves the A2A JSON-RPC endpoints, agent cards and health until SIGTERM or SIGINT, then
// stops in order (waits answered, waiting leases released, connections closed).
import { type Command, InvalidArgumentError } from "commander";
import { isPortInUse, portInUseError } from "./command-error.ts";
import { type CliContext, signingKey } from "./context.ts";

/**
 * The gateway's code, loaded when a command serves (gateway, start): the client commands (send, task, status) start
 * without the HTTP server, its metrics and its tracing.
 */
export function loadGateway(): Promise<typeof import("../gateway/index.ts")> {
  return import("../gateway/index.ts");
}

export function portNumber(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError("must be a port, 0..65535");
  return Number(value);
}

export function registerGateway(program: Command, context: CliContext): void {
  program
    .command("gateway")
    .description("serve the A2A JSON-RPC endpoints, agent cards and health checks")
    .option("--port <n>", "TCP port (default: server.port; 0 picks a free one)", portNumber)
    .action(async (options: { port?: number }) => {
      const config = context.config();
      const logger = context.logger("gateway");
      const port = options.port ?? config.server.port;
      const { startGateway } = await loadGateway();
      const gateway = await startGateway(config, { logger, cardSigningKey: signingKey(context), port }).catch(
        (error: unknown) => {
          throw isPortInUse(error) ? portInUseError(config.server.host, port) : error;
        },
      );
      await new Promise<void>((resolve) => {
        const shutdown = (signal: NodeJS.Signals): void => {
          logger.info({ signal }, "stopping gateway");
          process.off("SIGTERM", shutdown);
          process.off("SIGINT", shutdown);
          gateway.stop().then(resolve, (error: unknown) => {
            logger.error({ err: error }, "gateway did not stop cleanly");
            process.exitCode = 1;
            resolve();
          });
        };
        process.on("SIGTERM", shutdown);
        process.on("SIGINT", shutdown);
      });
    });
}
