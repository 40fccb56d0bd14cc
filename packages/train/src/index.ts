export {
  adam,
  sgd,
  type AdamOptions,
  type GroupOptions,
  type Optimizer,
  type ParamUpdate,
  type SgdOptions,
  type UpdateExtras,
} from "./optimizer.js";
export { nanoGPTGroups, groupOptimizers, type ParamGroup, type ParamSelector } from "./param-groups.js";
export { cosineSchedule, type CosineScheduleOptions, type LrSchedule } from "./schedule.js";
export { addGradClipping, type ClippedGrads } from "./grad-clip.js";
export { addGradAccumulation, MICRO_STEP_INPUT, type AccumulatedGrads } from "./grad-accumulation.js";
export { LR_SCALE_INPUT, trainingGraph, type TrainingGraph, type TrainingGraphOptions } from "./training-graph.js";
export { Trainer, createTrainer, type Batch, type StepEvent, type TrainerOptions } from "./trainer.js";
