/** Import a CSV or NDJSON file (with upload progress and the problems by line) and download an export. */
import { useState } from 'preact/hooks';
import { importFile, type Api, type ImportProgress, type ImportSummary } from './api.js';
import { Failure, html, Notice } from './ui.js';

const formatOf = (name: string): 'csv' | 'ndjson' => (/\.csv$/i.test(name) ? 'csv' : 'ndjson');

export function ImportPanel({ api, onImported }: { api: Api; onImported: () => void }) {
  const [file, setFile] = useState<File>();
  const [skip, setSkip] = useState(true);
  const [progress, setProgress] = useState<ImportProgress>();
  const [summary, setSummary] = useState<ImportSummary>();
  const [error, setError] = useState<unknown>();

  const start = async (event: Event) => {
    event.preventDefault();
    if (file === undefined) return;
    setSummary(undefined);
    setError(undefined);
    setProgress({ sent: 0, total: file.size });
    try {
      setSummary(await importFile(api, file, formatOf(file.name), skip ? 'skip' : 'all', setProgress));
      onImported();
    } catch (failure) {
      setError(failure);
    } finally {
      setProgress(undefined);
    }
  };

  return html`<form class="panel" onSubmit=${start} aria-labelledby="import-title">
    <h3 id="import-title">Import</h3>
    <label for="import-file">CSV or NDJSON file</label>
    <input
      id="import-file"
      type="file"
      accept=".csv,.ndjson,.jsonl,text/csv,application/x-ndjson"
      onChange=${(e: Event) => setFile((e.target as HTMLInputElement).files?.[0])}
    />
    <label class="check"
      ><input
        type="checkbox"
        checked=${skip}
        onChange=${(e: Event) => setSkip((e.target as HTMLInputElement).checked)}
      />
      Import the valid lines and list the others (otherwise all or nothing)</label
    >
    <button type="submit" disabled=${file === undefined || progress !== undefined}>Import</button>
    ${
      progress !== undefined &&
      html`<label for="import-progress">Uploading</label>
        <progress id="import-progress" max=${progress.total} value=${progress.sent}></progress>`
    }
    ${
      summary !== undefined &&
      html`<${Notice}>
        Imported: ${summary.created} created, ${summary.unchanged} unchanged, ${summary.skipped} skipped.
      </${Notice}>
      ${
        summary.problems.length > 0 &&
        html`<table class="problems">
          <caption>
            Lines not imported
          </caption>
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col">Error</th>
              <th scope="col">Problem</th>
            </tr>
          </thead>
          <tbody>
            ${summary.problems.map(
              (p) =>
                html`<tr>
                  <td>${p.line}</td>
                  <td>${p.error}</td>
                  <td>${p.message}</td>
                </tr>`,
            )}
          </tbody>
        </table>`
      }`
    }
    <${Failure} error=${error} />
  </form>`;
}

export function ExportButton({ api, q, tag }: { api: Api; q: string; tag: string }) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const download = async (format: 'csv' | 'ndjson') => {
    setBusy(true);
    setError(undefined);
    try {
      const chunks: Uint8Array[] = [];
      const body = await api.plants.exportPlantsText({
        format,
        ...(q === '' ? {} : { q }),
        ...(tag === '' ? {} : { tag }),
      });
      for await (const chunk of body) chunks.push(chunk);
      const url = URL.createObjectURL(
        new Blob(chunks as BlobPart[], { type: format === 'csv' ? 'text/csv' : 'application/x-ndjson' }),
      );
      const link = document.createElement('a');
      link.href = url;
      link.download = `plants.${format}`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`<div class="panel">
    <h3>Export</h3>
    <p class="hint">The plants matching the search and tag above.</p>
    <button type="button" disabled=${busy} onClick=${() => download('csv')}>Download CSV</button>
    <button type="button" disabled=${busy} onClick=${() => download('ndjson')}>Download NDJSON</button>
    <${Failure} error=${error} />
  </div>`;
}
