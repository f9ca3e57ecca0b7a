import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { renderHtml, type HtmlOptions } from './render-html';
import { renderJson } from './render-json';
import { renderMarkdown } from './render-markdown';
import type { BenchmarkReport } from './report-model';

export interface ReportFiles {
  readonly json: string;
  readonly markdown: string;
  readonly html: string;
}

export interface WriteReportOptions extends HtmlOptions {
  /** File name without extension (default `report`): writes NAME.json, NAME.md and NAME.html. */
  readonly baseName?: string;
}

/** Write the report as JSON, markdown and HTML into `directory` (created if missing); returns absolute paths. */
export async function writeReport(
  report: BenchmarkReport,
  directory: string,
  options: WriteReportOptions = {},
): Promise<ReportFiles> {
  const baseName = options.baseName ?? 'report';
  if (!/^[A-Za-z0-9._-]+$/.test(baseName))
    throw new RangeError(`baseName must be letters, digits, '.', '_' or '-' (got '${baseName}')`);
  const dir = resolve(directory);
  await mkdir(dir, { recursive: true });
  const files: ReportFiles = {
    json: join(dir, `${baseName}.json`),
    markdown: join(dir, `${baseName}.md`),
    html: join(dir, `${baseName}.html`),
  };
  await Promise.all([
    writeFile(files.json, renderJson(report)),
    writeFile(files.markdown, renderMarkdown(report)),
    writeFile(files.html, renderHtml(report, options)),
  ]);
  return files;
}
