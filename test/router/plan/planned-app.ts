/**
 * Type-checks and runs the CDK app file `prefix-router plan` prints, exactly as printed, the way a user's
 * `cdk init` app would: `cdk-prefix-aware-llm` resolves to this checkout's lib/, everything else to node_modules.
 * (test/installed/ does the same from the packed tarballs in a fresh `cdk init` app.)
 */
import { join } from 'node:path';
import * as ts from 'typescript';
import * as cdk from 'aws-cdk-lib';
import * as lib from '../../../lib/index';

const ROOT = join(__dirname, '..', '..', '..');
/** Where the printed file pretends to live, so its imports resolve from the repository. */
const APP_FILE = join(ROOT, 'test', 'router', 'plan', 'planned-app.generated.ts');

/**
 * Parsed declaration and source files (aws-cdk-lib's thousands of .d.ts, lib/) by path, shared by every check in a
 * suite: only the printed file changes between checks, and parsing the rest is most of a check's time.
 */
const parsedFiles = new Map<string, ts.SourceFile | undefined>();

/** The type checker's errors for the printed file, as `line: message` texts; none when it compiles. */
export function typeErrors(appText: string): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    esModuleInterop: true,
    types: [],
    baseUrl: ROOT,
    paths: { 'cdk-prefix-aware-llm': ['lib/index.ts'] },
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, version, ...rest) => {
    if (file === APP_FILE) return ts.createSourceFile(file, appText, version);
    if (!parsedFiles.has(file)) parsedFiles.set(file, getSourceFile(file, version, ...rest));
    return parsedFiles.get(file);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => file === APP_FILE || fileExists(file);
  const program = ts.createProgram([APP_FILE], options, host);
  return ts
    .getPreEmitDiagnostics(program, program.getSourceFile(APP_FILE))
    .map(
      (d) =>
        `${d.start === undefined ? '' : `${appText.slice(0, d.start).split('\n').length}: `}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

/** Runs the printed file and returns the stacks of the app it made. */
export function runPlannedApp(appText: string): cdk.Stack[] {
  const js = ts.transpileModule(appText, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  }).outputText;
  const apps: cdk.App[] = [];
  class RecordedApp extends cdk.App {
    constructor(props?: cdk.AppProps) {
      super(props);
      apps.push(this);
    }
  }
  const load = (id: string): unknown => {
    if (id === 'cdk-prefix-aware-llm') return lib;
    if (id === 'aws-cdk-lib') return { ...cdk, App: RecordedApp };
    return require(id);
  };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the app file plan printed, as a user's cdk app would
  new Function('require', 'exports', 'module', js)(load, {}, { exports: {} });
  return apps.flatMap((app) => app.node.children.filter((c): c is cdk.Stack => c instanceof cdk.Stack));
}
