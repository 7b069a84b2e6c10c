// Preact with htm (no JSX build step) and the small pieces every page shares.
import { cloneElement, render, toChildArray, type ComponentChildren, type VNode } from 'preact'
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { html } from 'htm/preact'
import { ApiError } from './api.js'

export { html }
export { render, useEffect, useLayoutEffect, useRef, useState }

export function mount(view: () => unknown): void {
  const root = document.getElementById('app')!
  root.textContent = ''
  render(html`<${view} />` as never, root)
}

export function Loading({ what = 'Loading…' }: { what?: string }) {
  return html`<p class="loading" role="status">${what}</p>`
}

/** An API error as the person should read it: the server's `detail`, and what to do about a network failure. */
export function ErrorNotice({ error, retry }: { error: unknown; retry?: () => void }) {
  if (!error) return null
  const detail = error instanceof ApiError ? error.detail : error instanceof Error ? error.message : String(error)
  const status = error instanceof ApiError && error.status ? ` (${error.status})` : ''
  return html`<div class="notice error" role="alert">${detail}${status}${retry ? html` <button class="link" onClick=${retry}>Try again</button>` : null}</div>`
}

export function Empty({ children }: { children: ComponentChildren }) {
  return html`<div class="empty">${children}</div>`
}

async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text)
  } catch {
    // Clipboard API refused (no permission, insecure origin): fall back to a selected textarea.
    const ta = document.createElement('textarea')
    ta.value = text
    document.body.append(ta)
    ta.select()
    document.execCommand('copy')
    ta.remove()
  }
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false)
  const onClick = async () => {
    await copyText(text)
    setDone(true)
    setTimeout(() => setDone(false), 2000)
  }
  return html`<button type="button" class="secondary" onClick=${onClick} aria-live="polite">${done ? 'Copied' : label}</button>`
}

export function Badge({ state }: { state: string }) {
  const words: Record<string, string> = {
    ok: 'OK',
    firing: 'Firing',
    pending_confirmation: 'Pending confirmation',
    paused: 'Paused',
    queued: 'Queued',
    delivered: 'Delivered',
    failed: 'Failed',
  }
  return html`<span class=${`badge ${state}`}>${words[state] ?? state}</span>`
}

/** Field label with its hint and the server's or the form's error for it, both tied to the control by aria-describedby. */
export function Field({
  id,
  label,
  hint,
  error,
  children,
}: {
  id: string
  label: string
  hint?: string
  error?: string
  children: ComponentChildren
}) {
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined
  const controls = toChildArray(children).map((c) =>
    typeof c === 'object' && (c as VNode<{ id?: string }>).props?.id === id
      ? cloneElement(c as VNode, { 'aria-describedby': describedBy })
      : c,
  )
  return html`<div><label for=${id}>${label}</label>${hint ? html`<span class="hint" id=${`${id}-hint`}>${hint}</span>` : null}${controls}
    ${error ? html`<p class="field-error" id=${`${id}-error`} role="alert">${error}</p>` : null}</div>`
}
