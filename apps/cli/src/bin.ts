#!/usr/bin/env node
import { main } from "./main.js";

// `attngraph demo | head` closes the pipe early; that is the reader's choice, not an error worth a stack trace.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});

process.exitCode = await main(process.argv.slice(2));
