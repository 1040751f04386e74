export { type Deferred, deferred } from './deferred.js';
export { type LogEntry, recordingLogger } from './recording-logger.js';
export { type TempDirs, tempDirs } from './temp-dirs.js';
export { alive, eventually, pidsOf } from './polling.js';
export {
  type JsonRpcExample,
  jsonRpcErrorExamples,
  jsonRpcNotificationExamples,
  jsonRpcSubtractExamples,
} from './json-rpc-examples.js';
export { type ErrorClass, rejectionOf, thrownBy } from './failures.js';
export { type DatabasePerTest, databasePerTest } from './database-per-test.js';
export { seriesValue } from './prometheus.js';
export { type ReceivedSpan, startOtlpReceiver } from './otlp-receiver.js';
export { turnRunner } from './turn-runner.js';
