// Import (docs/decisions.md §I-4.6.2, §9 and §15): pick a saved
// export file, see the dry run (stats, points, new or existing, trimmed,
// errors by line), confirm, follow the progress bar, then go to the stats.
import { api } from './lib/api.js'
import { ErrorNotice, Field, html, mount, useEffect, useState } from './lib/ui.js'

interface StatRow {
  name: string
  kind: string
  points: number
  new_stat: boolean
  points_accepted: number
  points_trimmed: number
  points_duplicate: number
  trimmed_by: string | null
}
interface Totals {
  format: string
  points_total: number
  points_accepted: number
  points_trimmed: number
  points_duplicate: number
  points_invalid: number
  errors_count: number
  stats: StatRow[]
  errors: Array<{ line: number; message: string }>
}
interface Preview extends Totals {
  warnings: string[]
}
interface Job extends Totals {
  id: string
  status: string
  progress: number
  points_done: number
  error: string | null
}

const n = (x: number) => x.toLocaleString('en-US')
const TRIMMED: Record<string, string> = {
  stat_limit: 'plan stat limit',
  daily_limit: 'daily point allowance',
  free_tier_full: 'free tier full',
}
const typeOf = (f: File) => f.type || (/\.csv$/i.test(f.name) ? 'text/csv' : 'application/json')

function StatsTable({ stats }: { stats: StatRow[] }) {
  return html`<div class="table-wrap"><table class="stack"><thead><tr><th>Stat</th><th>Kind</th><th></th><th class="num">Points</th><th class="num">Will import</th><th class="num">Trimmed</th><th class="num">Already there</th></tr></thead><tbody>
    ${stats.map(
      (
        s,
      ) => html`<tr key=${s.name}><td data-label="Stat" class="row-title">${s.name}</td><td data-label="Kind"><span class="kind">${s.kind}</span></td>
      <td data-label=""><span class=${`badge ${s.new_stat ? 'queued' : 'ok'}`}>${s.new_stat ? 'new stat' : 'existing'}</span></td>
      <td data-label="Points" class="num">${n(s.points)}</td><td data-label="Will import" class="num">${n(s.points_accepted)}</td>
      <td data-label="Trimmed" class="num">${n(s.points_trimmed)}${s.trimmed_by ? ` (${TRIMMED[s.trimmed_by] ?? s.trimmed_by})` : ''}</td><td data-label="Already there" class="num">${n(s.points_duplicate)}</td></tr>`,
    )}
  </tbody></table></div>`
}

function ImportPage() {
  const [file, setFile] = useState<File | null>(null)
  const [kind, setKind] = useState('gauge')
  const [preview, setPreview] = useState<Preview | null>(null)
  const [job, setJob] = useState<Job | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const run = async (dryRun: boolean) => {
    if (!file) return
    setBusy(true)
    setError(null)
    try {
      const path = `/api/v1/import/legacy?kind=${kind}${dryRun ? '&dryRun=1' : ''}`
      if (dryRun) setPreview(await api<Preview>('POST', path, file, typeOf(file)))
      else setJob((await api<{ import: Job }>('POST', path, file, typeOf(file))).import)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  // Follow a running import once a second until it ends.
  useEffect(() => {
    if (!job || job.status === 'completed' || job.status === 'failed') return
    const timer = setTimeout(() => {
      api<{ import: Job }>('GET', `/api/v1/import/legacy/${job.id}`).then((r) => setJob(r.import), setError)
    }, 1000)
    return () => clearTimeout(timer)
  }, [job])

  return html`<h1>Import</h1>
    <p class="muted">Bring history over from a saved export: the predecessor's export JSON (also as its command-line tool wrote it), this service's CSV or JSON export, a long CSV (<code>stat,value,timestamp</code>) or a wide CSV (<code>Time,stat 1,stat 2,…</code>). Up to 8 MB and 500,000 points; nothing is written until you confirm.</p>
    <form class="card" onSubmit=${(e: Event) => {
      e.preventDefault()
      void run(true)
    }}>
      <${Field} id="file" label="Export file" hint="JSON or CSV">
        <input id="file" type="file" accept=".json,.csv,application/json,text/csv" onChange=${(e: any) => {
          setFile(e.currentTarget.files?.[0] ?? null)
          setPreview(null)
          setJob(null)
          setError(null)
        }} />
      <//>
      <${Field} id="kind" label="Kind of new stats the file does not type" hint="Existing stats keep their kind.">
        <select id="kind" value=${kind} onChange=${(e: any) => {
          setKind(e.currentTarget.value)
          setPreview(null)
        }}><option value="gauge">gauge (values)</option><option value="counter">counter (counts)</option></select>
      <//>
      <${ErrorNotice} error=${error} />
      <div class="actions"><button type="submit" disabled=${!file || busy || !!job}>${busy && !preview ? 'Reading…' : 'Preview'}</button></div>
    </form>
    ${
      preview && !job
        ? html`<section class="card" aria-labelledby="preview-title"><h2 id="preview-title">Dry run: nothing written yet</h2>
      <p data-testid="totals">${n(preview.points_total)} points in the file (${preview.format.replace('_', ' ')}): <strong>${n(preview.points_accepted)} will be imported</strong>, ${n(preview.points_trimmed)} trimmed by the plan, ${n(preview.points_duplicate)} already there, ${n(preview.points_invalid)} on bad lines.</p>
      ${preview.warnings.map((w) => html`<div class="notice info">${w}</div>`)}
      ${preview.stats.length ? html`<${StatsTable} stats=${preview.stats} />` : null}
      ${
        preview.errors.length
          ? html`<h3>Errors by line (${n(preview.errors_count)})</h3><div class="table-wrap"><table><thead><tr><th class="num">Line</th><th>Problem</th></tr></thead><tbody>
        ${preview.errors.map((e) => html`<tr><td class="num">${e.line}</td><td>${e.message}</td></tr>`)}</tbody></table></div>
        <p class="small muted">Bad lines are left out; fix them and preview again, or import the rest.</p>`
          : null
      }
      <div class="actions"><button type="button" disabled=${busy || preview.points_accepted === 0} onClick=${() => run(false)}>Import ${n(preview.points_accepted)} points</button></div>
    </section>`
        : null
    }
    ${
      job
        ? html`<section class="card" aria-labelledby="job-title"><h2 id="job-title">${job.status === 'completed' ? 'Import complete' : job.status === 'failed' ? 'Import failed' : 'Importing…'}</h2>
      <label for="progress">${n(job.points_done)} of ${n(job.points_accepted)} points</label>
      <progress id="progress" max="100" value=${job.progress}>${job.progress}%</progress>
      ${job.error ? html`<div class="notice error">${job.error}</div>` : null}
      ${job.status === 'completed' ? html`<p>${job.stats.map((s, i) => html`${i ? ', ' : ''}<a href=${`/stats/${encodeURIComponent(s.name)}?range=180d`}>${s.name}</a>`)} · <a href="/stats">All stats</a></p>` : null}
    </section>`
        : null
    }`
}

mount(ImportPage)
