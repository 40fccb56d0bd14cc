import { describeExecutorContract } from "@attngraph/testkit/contract";
import { createCpuExecutor } from "./index.js";

describeExecutorContract("cpu", () => createCpuExecutor());
