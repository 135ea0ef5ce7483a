// The archipelago viewer page: draws the body table's shapes as instanced
// meshes, applies the server's frames (only changed bodies come), and sends
// commands back. Frame layout: viewer/src/protocol.rs.
import * as THREE from 'three';
import { OrbitControls } from '/vendor/OrbitControls.js';

const BODY_BYTES = 40, CONTACT_BYTES = 28, AABB_BYTES = 28;
const NO_SPLIT = 255, NO_ISLAND = 0xffffffff;
const STATE_FIXED = 0, STATE_AWAKE = 1, STATE_SLEEPING = 2;
const PHASE_COLOURS = ['#5e81ac', '#81a1c1', '#88c0d0', '#8fbcbb', '#a3be8c', '#ebcb8b',
  '#d08770', '#bf616a', '#b48ead', '#e5e9f0', '#4c566a', '#d8dee9'];
const HISTORY = 120;

const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);

// Read by tests (through the DevTools protocol) and handy in a console.
const state = { frames: 0, step: -1, bodies: 0, tableVersion: -1, scene: '', ready: false, error: '',
  contactPoints: 0, aabbs: 0, picked: null };
window.viewerState = state;

function showError(text) {
  state.error = text;
  $('error').style.display = 'block';
  $('error').textContent = text;
}

// ---- three.js world ----
let renderer;
try {
  renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
} catch (e) {
  showError('WebGL is not available: ' + e.message);
  throw e;
}
renderer.setPixelRatio(window.devicePixelRatio);
renderer.setSize(window.innerWidth, window.innerHeight);
$('view').appendChild(renderer.domElement);
const world = new THREE.Scene();
world.background = new THREE.Color(0x1d2127);
const camera = new THREE.PerspectiveCamera(50, window.innerWidth / window.innerHeight, 0.1, 3000);
camera.position.set(40, 30, 50);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0, 5, 0);
controls.update();
world.add(new THREE.HemisphereLight(0xdde6f0, 0x303540, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 1.8);
sun.position.set(30, 60, 20);
world.add(sun);
window.addEventListener('resize', () => {
  camera.aspect = window.innerWidth / window.innerHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(window.innerWidth, window.innerHeight);
});

// ---- body table → instanced meshes ----
let entries = [];        // per body index: table entry or null
let groups = [];         // {mesh, key}
let place = [];          // per body index: [group, instance] or null
let records = [];        // per body index: latest record or null
let contactsObj = null, aabbObj = null;

// Triangles from flat positions (and indices): hulls, meshes, terrain.
function trianglesGeometry(positions, indices) {
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.Float32BufferAttribute(positions, 3));
  if (indices) g.setIndex(indices);
  g.computeVertexNormals();
  return g;
}

// A height field's grid, centred as the kernel's, each cell split from
// sample (i, j) to (i+1, j+1) as the kernel splits it.
function heightfieldGeometry(nx, nz, sx, sz, h) {
  const p = [], idx = [];
  const x0 = -0.5 * (nx - 1) * sx, z0 = -0.5 * (nz - 1) * sz;
  for (let j = 0; j < nz; j++)
    for (let i = 0; i < nx; i++) p.push(x0 + i * sx, h[j * nx + i], z0 + j * sz);
  for (let j = 0; j + 1 < nz; j++)
    for (let i = 0; i + 1 < nx; i++) {
      const a = j * nx + i, b = a + 1, c = a + nx, d = c + 1;
      idx.push(a, d, b, a, c, d);
    }
  return trianglesGeometry(p, idx);
}

// A compound's children, each placed at its pose, as one triangle soup
// (one geometry, so a compound body is one instance like any other).
function compoundGeometry(children) {
  const p = [];
  const one = new THREE.Vector3(1, 1, 1);
  for (const [child, at, q] of children) {
    const g = geometryFor(child).toNonIndexed();
    g.applyMatrix4(new THREE.Matrix4().compose(
      new THREE.Vector3(...at), new THREE.Quaternion(...q), one));
    for (const v of g.getAttribute('position').array) p.push(v);
    g.dispose();
  }
  return trianglesGeometry(p);
}

function geometryFor(e) {
  switch (e[0]) {
    case 'box': return new THREE.BoxGeometry(2 * e[1], 2 * e[2], 2 * e[3]);
    case 'sphere': return new THREE.SphereGeometry(e[1], 20, 14);
    case 'capsule': return new THREE.CapsuleGeometry(e[2], 2 * e[1], 6, 14);
    case 'hull': return trianglesGeometry(e[2]);
    case 'mesh': return trianglesGeometry(e[2], e[3]);
    case 'heightfield': return heightfieldGeometry(e[2], e[3], e[4], e[5], e[6]);
    case 'compound': return compoundGeometry(e[2]);
  }
  return new THREE.BoxGeometry(0.1, 0.1, 0.1);
}

function buildTable(msg) {
  for (const g of groups) {
    world.remove(g.mesh);
    g.mesh.geometry.dispose();
    g.mesh.material.dispose();
  }
  entries = msg.bodies;
  const byKey = new Map();
  place = entries.map(() => null);
  entries.forEach((e, i) => {
    if (!e) return;
    const key = JSON.stringify(e.slice(0, -1));
    if (!byKey.has(key)) byKey.set(key, { entry: e, members: [] });
    byKey.get(key).members.push(i);
  });
  groups = [];
  const hidden = new THREE.Matrix4().makeScale(0, 0, 0);
  for (const [key, g] of byKey) {
    const material = new THREE.MeshStandardMaterial({ roughness: 0.75, metalness: 0.05 });
    const mesh = new THREE.InstancedMesh(geometryFor(g.entry), material, g.members.length);
    mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
    mesh.frustumCulled = false;
    g.members.forEach((bodyIndex, k) => {
      place[bodyIndex] = [groups.length, k];
      mesh.setMatrixAt(k, hidden);
      mesh.setColorAt(k, new THREE.Color(0x808080));
    });
    groups.push({ mesh, key });
    world.add(mesh);
  }
  records = entries.map(() => null);
  const sceneChanged = msg.scene !== state.scene;
  state.scene = msg.scene;
  state.tableVersion = msg.version;
  state.bodies = entries.filter((e) => e).length;
  $('bodies').textContent = state.bodies;
  $('scene').value = msg.scene;
  if (sceneChanged) fitCamera = true;
}

let fitCamera = true;
function fitToBodies() {
  const box = new THREE.Box3();
  records.forEach((r, i) => {
    if (r && entries[i] && entries[i][entries[i].length - 1] !== 'static') box.expandByPoint(r.p);
  });
  if (box.isEmpty()) return;
  const c = box.getCenter(new THREE.Vector3());
  const size = Math.max(box.getSize(new THREE.Vector3()).length(), 4);
  controls.target.copy(c);
  camera.position.set(c.x + 0.75 * size, c.y + 0.55 * size, c.z + 0.95 * size);
  controls.update();
}

// ---- colours ----
let colourMode = params.get('color') || 'body';
$('color').value = colourMode;
const tmpColour = new THREE.Color();
function hue(n) { return ((n * 0.6180339887) % 1 + 1) % 1; }
function colourOf(i, r) {
  const e = entries[i];
  if (!e || !r) return tmpColour.set(0x808080);
  if (r.state === STATE_FIXED) return tmpColour.set(0x555b66);
  switch (colourMode) {
    case 'island':
      if (r.state === STATE_SLEEPING) return tmpColour.set(0x39465a);
      if (r.island === NO_ISLAND) return tmpColour.set(0xb0b6c0);
      return tmpColour.setHSL(hue(r.island + 1), 0.65, 0.55);
    case 'split':
      if (r.split === NO_SPLIT) return tmpColour.set(0x6b7280);
      if (r.split === 31) return tmpColour.set(0xffffff);
      return tmpColour.setHSL(hue(r.split + 1), 0.75, 0.55);
    case 'sleep':
      return r.state === STATE_SLEEPING ? tmpColour.set(0x4a6fa5) : tmpColour.set(0x7fcf6f);
    default:
      return tmpColour.setHSL(hue(i), 0.55, 0.58);
  }
}
const COLOUR_NOTES = {
  body: 'a colour per body',
  island: 'a colour per island; pale: awake, touching nothing; dark: asleep',
  split: "a body's highest split (the splitter gives its constraints the lowest free splits in turn; white: the non-parallel split, grey: island not split); contact lines show each contact's own split",
  sleep: 'green: awake, blue: asleep, grey: static',
};
function noteColour() { $('colour-note').textContent = COLOUR_NOTES[colourMode] || ''; }
noteColour();
function recolourAll() {
  noteColour();
  records.forEach((r, i) => {
    const at = place[i];
    if (at) groups[at[0]].mesh.setColorAt(at[1], colourOf(i, r));
  });
  for (const g of groups) if (g.mesh.instanceColor) g.mesh.instanceColor.needsUpdate = true;
}

// ---- frames ----
const m4 = new THREE.Matrix4(), one = new THREE.Vector3(1, 1, 1);
function applyFrame(buf) {
  const d = new DataView(buf);
  if (d.getUint8(0) !== 1) return;
  const step = d.getUint32(1, true), version = d.getUint32(5, true);
  if (version !== state.tableVersion) return; // its table is on the way
  let at = 9;
  const n = d.getUint32(at, true); at += 4;
  for (let k = 0; k < n; k++, at += BODY_BYTES) {
    const i = d.getUint32(at, true);
    const r = {
      p: new THREE.Vector3(d.getFloat32(at + 4, true), d.getFloat32(at + 8, true), d.getFloat32(at + 12, true)),
      q: new THREE.Quaternion(d.getFloat32(at + 16, true), d.getFloat32(at + 20, true),
        d.getFloat32(at + 24, true), d.getFloat32(at + 28, true)),
      state: d.getUint8(at + 32), split: d.getUint8(at + 33), island: d.getUint32(at + 36, true),
    };
    records[i] = r;
    const pl = place[i];
    if (!pl) continue;
    const mesh = groups[pl[0]].mesh;
    mesh.setMatrixAt(pl[1], m4.compose(r.p, r.q, one));
    mesh.setColorAt(pl[1], colourOf(i, r));
  }
  for (const g of groups) {
    g.mesh.instanceMatrix.needsUpdate = true;
    if (g.mesh.instanceColor) g.mesh.instanceColor.needsUpdate = true;
  }
  const nc = d.getUint32(at, true); at += 4;
  drawContacts(d, at, nc); at += nc * CONTACT_BYTES;
  const na = d.getUint32(at, true); at += 4;
  drawAabbs(d, at, na);
  if (fitCamera) { fitToBodies(); fitCamera = false; }
  state.frames += 1;
  state.step = step;
  state.ready = true;
  $('frames').textContent = state.frames;
}

function replaceObject(old, obj) {
  if (old) { world.remove(old); old.geometry.dispose(); old.material.dispose(); }
  if (obj) world.add(obj);
  return obj;
}

function drawContacts(d, at, n) {
  state.contactPoints = n;
  if (n === 0) { contactsObj = replaceObject(contactsObj, null); return; }
  const pos = new Float32Array(n * 6), col = new Float32Array(n * 6);
  for (let k = 0; k < n; k++, at += CONTACT_BYTES) {
    const x = d.getFloat32(at, true), y = d.getFloat32(at + 4, true), z = d.getFloat32(at + 8, true);
    const nx = d.getFloat32(at + 12, true), ny = d.getFloat32(at + 16, true), nz = d.getFloat32(at + 20, true);
    const split = d.getUint8(at + 24);
    pos.set([x, y, z, x + 0.3 * nx, y + 0.3 * ny, z + 0.3 * nz], k * 6);
    if (split === NO_SPLIT) tmpColour.set(0xffd866); else tmpColour.setHSL(hue(split + 1), 0.9, 0.6);
    col.set([tmpColour.r, tmpColour.g, tmpColour.b, tmpColour.r, tmpColour.g, tmpColour.b], k * 6);
  }
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  g.setAttribute('color', new THREE.BufferAttribute(col, 3));
  const lines = new THREE.LineSegments(g, new THREE.LineBasicMaterial({ vertexColors: true, depthTest: false }));
  lines.renderOrder = 2;
  contactsObj = replaceObject(contactsObj, lines);
}

const EDGES = [[0, 1], [1, 3], [3, 2], [2, 0], [4, 5], [5, 7], [7, 6], [6, 4], [0, 4], [1, 5], [2, 6], [3, 7]];
function drawAabbs(d, at, n) {
  state.aabbs = n;
  if (n === 0) { aabbObj = replaceObject(aabbObj, null); return; }
  const pos = new Float32Array(n * 72);
  for (let k = 0; k < n; k++, at += AABB_BYTES) {
    const lo = [d.getFloat32(at + 4, true), d.getFloat32(at + 8, true), d.getFloat32(at + 12, true)];
    const hi = [d.getFloat32(at + 16, true), d.getFloat32(at + 20, true), d.getFloat32(at + 24, true)];
    const corner = (c) => [c & 1 ? hi[0] : lo[0], c & 2 ? hi[1] : lo[1], c & 4 ? hi[2] : lo[2]];
    EDGES.forEach(([a, b], e) => pos.set([...corner(a), ...corner(b)], k * 72 + e * 6));
  }
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  aabbObj = replaceObject(aabbObj, new THREE.LineSegments(g, new THREE.LineBasicMaterial({ color: 0x88c0d0 })));
}

// ---- stats panel ----
const history = [];
let phaseNames = [];
let playing = true;
function applyStats(s) {
  $('mode').textContent = s.mode + (s.playing ? ' · playing' : ' · paused');
  $('stepno').textContent = s.mode === 'replay' ? `${s.step} / ${s.steps}` : s.step;
  $('active').textContent = s.active;
  playing = s.playing;
  $('play').textContent = playing ? 'pause' : 'play';
  if (s.scenes && s.scenes.length && $('scene').options.length !== s.scenes.length) {
    $('scene').innerHTML = s.scenes.map((n) => `<option value="${n}">${n}</option>`).join('');
    $('scene').value = s.scene;
  }
  if (s.mode !== 'live') return;
  $('islands').textContent = `${s.islands} (${s.large_islands})`;
  $('ncontacts').textContent = `${s.contacts} (${s.contact_points})`;
  $('threads').textContent = `${s.threads} · ${s.simd}`;
  $('ms').textContent = s.ms.toFixed(2);
  $('hash').textContent = s.hash;
  if (history.length && history[history.length - 1].step === s.step) return;
  phaseNames = s.phases.map((p) => p[0]);
  history.push({ step: s.step, phases: s.phases.map((p) => p[1]) });
  while (history.length > HISTORY) history.shift();
  drawPlot();
}

function drawPlot() {
  const c = $('plot'), g = c.getContext('2d');
  g.clearRect(0, 0, c.width, c.height);
  const totals = history.map((h) => h.phases.reduce((a, b) => a + b, 0));
  const top = Math.max(1e-3, ...totals) * 1.1;
  const w = c.width / HISTORY;
  history.forEach((h, x) => {
    let y = c.height;
    h.phases.forEach((ms, k) => {
      const hpx = (ms / top) * c.height;
      g.fillStyle = PHASE_COLOURS[k % PHASE_COLOURS.length];
      g.fillRect(x * w, y - hpx, Math.ceil(w), hpx);
      y -= hpx;
    });
  });
  g.fillStyle = '#d8dee9';
  g.fillText(`${top.toFixed(2)} ms`, 4, 11);
  const legend = phaseNames.map((n, k) =>
    `<span><i style="background:${PHASE_COLOURS[k % PHASE_COLOURS.length]}"></i>${n}</span>`).join('');
  if ($('legend').innerHTML !== legend) $('legend').innerHTML = legend;
}

function showPick(p) {
  const el = $('inspect');
  el.style.display = 'block';
  state.picked = p.hit ? p.index : -1;
  if (!p.hit) { el.textContent = p.replay ? 'inspecting needs a live run' : 'no body under the mouse'; return; }
  const f = (v) => v.map((x) => x.toFixed(3)).join(', ');
  el.textContent =
    `body ${p.id} (table index ${p.index})\n` +
    `state ${p.state}   island ${p.island ?? '-'}   split ${p.split ?? '-'}\n` +
    `mass ${p.mass == null ? 'static' : p.mass.toFixed(2) + ' kg'}\n` +
    `velocity (${f(p.velocity)}) m/s\n` +
    `angular velocity (${f(p.angular_velocity)}) rad/s\n` +
    `hit at (${f(p.point)}), ${p.distance.toFixed(2)} m away`;
}

// ---- connection ----
let ws;
function send(obj) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(obj)); }
function connect() {
  ws = new WebSocket(`ws://${location.host}/ws`);
  ws.binaryType = 'arraybuffer';
  let first = true;
  ws.onopen = () => { $('mode').textContent = 'connected'; };
  ws.onmessage = (ev) => {
    if (typeof ev.data !== 'string') { applyFrame(ev.data); return; }
    const msg = JSON.parse(ev.data);
    if (msg.type === 'table') buildTable(msg);
    else if (msg.type === 'stats') {
      applyStats(msg);
      if (first) { first = false; startupCommands(msg); }
    } else if (msg.type === 'pick') showPick(msg);
    else if (msg.type === 'error') showError(msg.message);
  };
  ws.onclose = () => { $('mode').textContent = 'disconnected: retrying'; setTimeout(connect, 1000); };
}

// URL parameters: ?scene=NAME&color=MODE&paused=1&run_to=STEP&contacts=1&aabbs=1
function startupCommands(s) {
  const want = params.get('scene');
  if (want && s.mode === 'live' && want !== s.scene) send({ cmd: 'scene', name: want });
  if (params.get('paused') === '1') send({ cmd: 'pause' });
  if (params.has('run_to')) send({ cmd: 'run_to', step: Number(params.get('run_to')) });
  const c = params.get('contacts') === '1', a = params.get('aabbs') === '1';
  $('contacts').checked = c; $('aabbs').checked = a;
  if (c || a) send({ cmd: 'draw', contacts: c, aabbs: a });
}

// ---- controls ----
$('play').onclick = () => send({ cmd: playing ? 'pause' : 'play' });
$('step').onclick = () => send({ cmd: 'step' });
$('reset').onclick = () => send({ cmd: 'reset' });
$('speed').onchange = (e) => send({ cmd: 'speed', value: Number(e.target.value) });
$('scene').onchange = (e) => send({ cmd: 'scene', name: e.target.value });
$('color').onchange = (e) => { colourMode = e.target.value; recolourAll(); };
const sendDraw = () => send({ cmd: 'draw', contacts: $('contacts').checked, aabbs: $('aabbs').checked });
$('contacts').onchange = sendDraw;
$('aabbs').onchange = sendDraw;

function rayThrough(x, y) {
  const ndc = new THREE.Vector2((x / window.innerWidth) * 2 - 1, -(y / window.innerHeight) * 2 + 1);
  const r = new THREE.Raycaster();
  r.setFromCamera(ndc, camera);
  return { origin: r.ray.origin.toArray(), direction: r.ray.direction.toArray() };
}
let down = null;
renderer.domElement.addEventListener('pointerdown', (e) => { down = [e.clientX, e.clientY]; });
renderer.domElement.addEventListener('pointerup', (e) => {
  if (!down || Math.hypot(e.clientX - down[0], e.clientY - down[1]) > 4) return;
  const ray = rayThrough(e.clientX, e.clientY);
  send({ cmd: e.shiftKey ? 'shoot' : 'pick', ...ray });
});
let mouse = [window.innerWidth / 2, window.innerHeight / 2];
window.addEventListener('pointermove', (e) => { mouse = [e.clientX, e.clientY]; });
window.addEventListener('keydown', (e) => {
  if (e.target.tagName === 'SELECT') return;
  if (e.code === 'Space') { send({ cmd: playing ? 'pause' : 'play' }); e.preventDefault(); }
  if (e.code === 'KeyN') send({ cmd: 'step' });
  if (e.code === 'KeyB') send({ cmd: 'shoot', ...rayThrough(mouse[0], mouse[1]) });
});

function render() {
  requestAnimationFrame(render);
  controls.update();
  renderer.render(world, camera);
}
connect();
render();
