#!/usr/bin/env node
/**
 * Draws the layout of the construct's CloudWatch dashboard as an SVG, from the dashboard body of a synthesized
 * stack (not a screenshot): one box per widget at its grid position, with its title, its series and its
 * horizontal annotations. `npm run docs:dashboard` regenerates docs/operations-dashboard.svg; a test checks the
 * committed picture matches the current construct.
 *
 *   node dist/bin/dashboard-svg.js [--out docs/operations-dashboard.svg]
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { writeFileSync } from 'fs';
import { join } from 'path';
import { InstanceType, ModelSource, PrefixAwareLlmEndpoint } from '../lib/index';

/** One widget of a CloudWatch dashboard body (the fields the picture uses). */
interface DashboardWidget {
  readonly type: string;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly properties: {
    readonly title?: string;
    readonly markdown?: string;
    readonly metrics?: unknown[][];
    readonly annotations?: { readonly horizontal?: Array<{ readonly label?: string; readonly value: number }> };
  };
}

/** CloudFormation's `Fn::Join` of a dashboard body, with every `Ref` written as `<Name>`, parsed. */
export function dashboardBodyOf(body: unknown): { widgets: DashboardWidget[] } {
  const flatten = (node: unknown): string => {
    if (typeof node === 'string') return node;
    const record = node as Record<string, unknown>;
    if (record['Fn::Join']) {
      const [separator, parts] = record['Fn::Join'] as [string, unknown[]];
      return parts.map(flatten).join(separator);
    }
    if (typeof record.Ref === 'string') return `<${record.Ref}>`;
    throw new Error(`unexpected intrinsic in dashboard body: ${JSON.stringify(node)}`);
  };
  return JSON.parse(flatten(body)) as { widgets: DashboardWidget[] };
}

const CELL = 40;
const ROW = 36;
const PAD = 6;
const TEXT = 12;

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function clip(text: string, width: number): string {
  const max = Math.floor((width - 2 * PAD) / 6.2);
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

/** The labels of a widget's visible series (expressions used only as inputs are skipped). */
function seriesLabels(widget: DashboardWidget): string[] {
  const labels: string[] = [];
  for (const entry of widget.properties.metrics ?? []) {
    const options = entry[entry.length - 1];
    if (typeof options !== 'object' || options === null) continue;
    const o = options as { label?: string; visible?: boolean; expression?: string };
    if (o.visible === false) continue;
    const label = o.label ?? o.expression ?? '';
    labels.push(
      label.includes("PROP('Dim.InstanceId')")
        ? 'one line per instance (InstanceId)'
        : label.includes("PROP('Dim.Reason')")
          ? 'one line per decision reason'
          : label,
    );
  }
  return labels;
}

/** The SVG picture of a dashboard body: deterministic, so the committed file can be compared in a test. */
export function renderDashboardSvg(body: { widgets: DashboardWidget[] }, caption: string): string {
  const widgets = body.widgets;
  const width = 24 * CELL;
  const height = Math.max(...widgets.map((w) => w.y + w.height)) * ROW + 40;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="${width}" height="${height}" fill="#f7f7f7"/>`,
    `<text x="${PAD}" y="${height - 14}" font-size="${TEXT}" fill="#555">${escape(caption)}</text>`,
  ];
  for (const widget of widgets) {
    const x = widget.x * CELL + 2;
    const y = widget.y * ROW + 2;
    const w = widget.width * CELL - 4;
    const h = widget.height * ROW - 4;
    out.push(`<g><rect x="${x}" y="${y}" width="${w}" height="${h}" rx="4" fill="#fff" stroke="#bbb"/>`);
    const title = widget.properties.title ?? (widget.properties.markdown ?? '').split('\n')[0].replace(/\*\*/g, '');
    out.push(
      `<text x="${x + PAD}" y="${y + PAD + TEXT}" font-size="${TEXT + 1}" font-weight="bold" fill="#222">${escape(clip(title, w))}</text>`,
    );
    let line = 2;
    const lines =
      widget.type === 'text' ? ['text: a PromQL query to run in CloudWatch Query Studio'] : seriesLabels(widget);
    for (const label of lines) {
      if ((line + 1) * (TEXT + 4) > h - PAD) break;
      out.push(
        `<text x="${x + PAD}" y="${y + PAD + line * (TEXT + 4)}" font-size="${TEXT - 1}" fill="#1f77b4">• ${escape(clip(label, w - 10))}</text>`,
      );
      line += 1;
    }
    for (const annotation of widget.properties.annotations?.horizontal ?? []) {
      if ((line + 1) * (TEXT + 4) > h - PAD) break;
      out.push(
        `<text x="${x + PAD}" y="${y + PAD + line * (TEXT + 4)}" font-size="${TEXT - 1}" fill="#d62728">― ${escape(clip(`${annotation.label ?? ''} = ${annotation.value}`, w - 10))}</text>`,
      );
      line += 1;
    }
    out.push('</g>');
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** The dashboard the docs show: the benchmark fleet (7 × ml.p5.48xlarge, PREFIX_AWARE 8192/32) with the router sidecar's metrics. */
export function documentedDashboardSvg(): string {
  const stack = new Stack(new App(), 'Docs');
  new PrefixAwareLlmEndpoint(stack, 'Llm', {
    model: ModelSource.huggingFace('meta-llama/Llama-3.1-70B-Instruct'),
    instanceType: InstanceType.ML_P5_48XLARGE,
    instanceCount: 7,
    endpointName: 'llama-70b-prefix-aware',
    monitoring: { routerSidecarMetrics: true },
  });
  const dashboards = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Dashboard'));
  const body = dashboardBodyOf((dashboards[0] as { Properties: { DashboardBody: unknown } }).Properties.DashboardBody);
  return renderDashboardSvg(
    body,
    'PrefixAwareLlmEndpoint dashboard, 7 × ml.p5.48xlarge, PREFIX_AWARE, router sidecar metrics on ' +
      '(drawn from the synthesized DashboardBody by bin/dashboard-svg.ts)',
  );
}

/** Where `npm run docs:dashboard` writes the picture, relative to the repository root. */
export const DASHBOARD_SVG_PATH = join('docs', 'operations-dashboard.svg');

if (require.main === module) {
  const at = process.argv.indexOf('--out');
  const path = at >= 0 ? process.argv[at + 1] : DASHBOARD_SVG_PATH;
  writeFileSync(path, documentedDashboardSvg());
  process.stdout.write(`wrote ${path}\n`);
}
