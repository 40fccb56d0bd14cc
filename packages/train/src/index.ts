export { adam, sgd, type AdamOptions, type Optimizer, type ParamUpdate, type SgdOptions } from "./optimizer.js";
export { trainingGraph, type TrainingGraph, type TrainingGraphOptions } from "./training-graph.js";
export { Trainer, createTrainer, type StepEvent, type TrainerOptions } from "./trainer.js";
