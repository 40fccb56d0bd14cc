#!/usr/bin/env node
import { outputFailed, processIO } from "./io.js";
import { main } from "./main.js";

// `attngraph demo | head` closes the pipe early (exit 0); `attngraph demo > /dev/full` fails its writes (one line, 1).
process.stdout.on("error", (e) => process.exit(outputFailed(e, processIO.err)));

process.exitCode = await main(process.argv.slice(2));
