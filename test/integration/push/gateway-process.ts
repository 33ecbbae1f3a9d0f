// A gateway process for the push end-to-end tests: only src/gateway (and what it imports) is loaded, exactly the
// module graph `a2a-runtime gateway` serves with. It prints one READY line with its URL, its pid and every project
// module it has loaded, so a test can check that no delivery code is among them; SIGTERM stops it.
import { loadConfig } from "../../../src/config/index.ts";
import { startGateway } from "../../../src/gateway/index.ts";

export const READY_MARK = "GATEWAY-READY ";

if (import.meta.main) {
  const config = loadConfig({ env: process.env });
  const gateway = await startGateway(config, { port: 0 });
  const root = new URL("../../../src/", import.meta.url).pathname;
  const modules = Object.keys(require.cache)
    .filter((path) => path.startsWith(root))
    .map((path) => path.slice(root.length));
  process.stdout.write(`${READY_MARK}${JSON.stringify({ url: gateway.url, pid: process.pid, modules })}\n`);
  process.on("SIGTERM", () => {
    void gateway.stop().finally(() => process.exit(0));
  });
}
