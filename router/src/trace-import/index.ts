export * from './import-trace';
export { importSources, sourceLines, type ImportSource, type SourceLine, type SourceOptions } from './import-sources';
export {
  CAPTURE_FORMAT_TITLES,
  CAPTURE_FORMATS,
  detectFormat,
  recognizeCaptureLine,
  parseDataCaptureLine,
  parseRequestLogLine,
  type CaptureFormat,
  type CaptureFormatOption,
} from './capture-formats';
export {
  requestShape,
  responseOutput,
  UnusableRequest,
  type CapturedRequest,
  type ProblemKind,
  type RequestShape,
} from './captured-request';
export { KeyedBlockIds, DigestTable } from './keyed-block-ids';
export { loadTokenizer, type PromptTokenizer } from '../state/tokenizer-file';
export {
  writeCapture,
  captureFileKey,
  DEFAULT_CAPTURE_START_MS,
  type CaptureWriteOptions,
  type CaptureEncodingChoice,
} from './capture-writer';
