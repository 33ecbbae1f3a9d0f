// The runs scenario's peer: one BullMQ Worker process with a no-op processor, in the configuration BullMQ's docs
// recommend for production (ioredis connection with maxRetriesPerRequest null, bounded removeOnComplete/Fail).
// Usage: bullmq-worker <redis url> <queue name> <concurrency>. Stops on SIGTERM after closing the worker.
import { Worker } from "bullmq";

const [url = "", queueName = "bench", concurrencyText = "8"] = process.argv.slice(2);
const { hostname, port } = new URL(url);
const worker = new Worker(queueName, async () => {}, {
  connection: { host: hostname, port: Number(port), maxRetriesPerRequest: null },
  concurrency: Number(concurrencyText),
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 5000 },
});
worker.on("error", (error) => process.stderr.write(`bullmq worker error: ${error.message}\n`));
await worker.waitUntilReady();
process.stdout.write(`bullmq-worker ready (${typeof Bun !== "undefined" ? "bun" : "node"})\n`);
process.on("SIGTERM", () => {
  void worker.close().then(() => process.exit(0));
});
