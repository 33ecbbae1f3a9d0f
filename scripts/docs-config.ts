// Rewrites docs/configuration.md from the configuration schema (`npm run docs:config`).
import { writeFileSync } from "node:fs";
import { renderConfigurationReference } from "../src/config/reference.ts";

writeFileSync(new URL("../docs/configuration.md", import.meta.url), renderConfigurationReference());
process.stdout.write("docs/configuration.md written\n");
