// An ISO BMFF reader nobody here wrote, for tests/dash_conformance/: gpac's mp4box.js
// (the `mp4box` package pinned in package-lock.json) parses every box of a CMAF track (an
// init segment and its media segments joined) and reports what it finds wrong with them
// (sizes that do not match a box's contents, unknown or invalid boxes, duplicates). On the
// tree it parsed, this script then checks the structure ISO/IEC 23000-19 (CMAF) and
// ISO/IEC 14496-12 ask of a fragmented track, each rule citing where it comes from.
//
// It lives beside the players because their npm lock already pins what it needs.
//
// Usage: node isobmff_check.mjs FILE...
// Prints one JSON line per file: {"file", "problems": [...], "fragments", "samples",
// "handler", "entry"}. Exit code 0 unless a file cannot be read at all.

import { readFileSync } from "node:fs";
import { createFile, Log, MP4BoxBuffer } from "mp4box";

// Everything mp4box.js warns or errors about while parsing is a finding.
let findings = [];
Log.setLogLevel(Log.warn);
Log.warn = (module, msg) => findings.push(`mp4box.js ${module}: ${msg}`);
Log.error = (module, msg) => findings.push(`mp4box.js ${module} (error): ${msg}`);

// 14496-12 top-level boxes a CMAF track file may carry after its header (CMAF 7.3.3:
// segments of styp?, sidx?, emsg*, prft?, then moof mdat pairs).
const SEGMENT_BOXES = new Set(["styp", "sidx", "ssix", "emsg", "prft", "moof", "mdat", "free", "skip"]);
// tfhd flags (14496-12 8.8.7.1).
const BASE_DATA_OFFSET_PRESENT = 0x000001;
const DEFAULT_SAMPLE_DURATION_PRESENT = 0x000008;
const DEFAULT_SAMPLE_FLAGS_PRESENT = 0x000020;
const DEFAULT_BASE_IS_MOOF = 0x020000;
// trun flags (8.8.8.1).
const DATA_OFFSET_PRESENT = 0x000001;
const FIRST_SAMPLE_FLAGS_PRESENT = 0x000004;
const SAMPLE_DURATION_PRESENT = 0x000100;
const SAMPLE_SIZE_PRESENT = 0x000200;
const SAMPLE_FLAGS_PRESENT = 0x000400;
// sample_is_non_sync_sample (8.8.3.1 sample flags).
const NON_SYNC = 0x00010000;

const children = (box) => box?.boxes ?? [];
const all = (box, type) => children(box).filter((b) => b.type === type);
const one = (box, type) => all(box, type)[0];

function check(file) {
  findings = [];
  const bytes = readFileSync(file);
  const buffer = MP4BoxBuffer.fromArrayBuffer(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    0,
  );
  const iso = createFile(true);
  iso.onError = (module, msg) => findings.push(`mp4box.js ${module} (error): ${msg}`);
  iso.appendBuffer(buffer, true);
  iso.flush();
  const problems = [...findings];
  const fail = (rule, what) => problems.push(`${rule}: ${what}`);
  const top = iso.boxes ?? [];

  // Sizes: the top-level boxes tile the file exactly.
  let at = 0;
  for (const box of top) {
    if (box.start !== at) fail("14496-12 4.2", `box ${box.type} starts at ${box.start}, expected ${at}`);
    at = box.start + box.size;
  }
  if (at !== bytes.length) fail("14496-12 4.2", `boxes cover ${at} of ${bytes.length} bytes`);

  // Header: ftyp then moov (CMAF 7.3.1).
  const [ftyp, moov] = top;
  if (ftyp?.type !== "ftyp") fail("CMAF 7.3.1", `first box is ${ftyp?.type}, not ftyp`);
  if (moov?.type !== "moov") fail("CMAF 7.3.1", `second box is ${moov?.type}, not moov`);
  const brands = [ftyp?.major_brand, ...(ftyp?.compatible_brands ?? [])];
  if (!brands.some((b) => /^iso[6-9]$/.test(b) || b === "cmfc" || b === "cmf2")) {
    fail("CMAF 7.2", `ftyp brands ${brands.join(",")} name neither iso6+ nor a CMAF brand`);
  }
  for (const box of top.slice(2)) {
    if (!SEGMENT_BOXES.has(box.type)) fail("CMAF 7.3.3", `top-level ${box.type} after moov`);
  }

  // moov: one track, sample tables empty, mvex/trex for it (CMAF 7.3.2, 7.5.x).
  const traks = all(moov, "trak");
  if (!one(moov, "mvhd")) fail("14496-12 8.2.2", "moov without mvhd");
  if (traks.length !== 1) fail("CMAF 7.3.2.2", `${traks.length} trak boxes, not 1`);
  const trak = traks[0];
  const tkhd = one(trak, "tkhd");
  const trackId = tkhd?.track_id;
  const mdia = one(trak, "mdia");
  const handler = one(mdia, "hdlr")?.handler;
  if (!one(mdia, "mdhd")) fail("14496-12 8.4.2", "mdia without mdhd");
  const stbl = one(one(mdia, "minf"), "stbl");
  const stsd = one(stbl, "stsd");
  const entries = stsd?.entries ?? children(stsd);
  if (entries.length !== 1) fail("CMAF 7.3.2.3", `stsd has ${entries.length} sample entries, not 1`);
  const entry = entries[0]?.type;
  for (const [type, count] of [["stts", "entries"], ["stsc", "entries"], ["stco", "chunk_offsets"]]) {
    const table = one(stbl, type);
    if (!table) fail("14496-12 8.5.1", `stbl without ${type}`);
    else if ((table[count]?.length ?? 0) !== 0) fail("CMAF 7.5.x", `${type} is not empty in a fragmented track`);
  }
  const stsz = one(stbl, "stsz") ?? one(stbl, "stz2");
  if (!stsz) fail("14496-12 8.7.3", "stbl without stsz");
  else if ((stsz.sample_count ?? 0) !== 0) fail("CMAF 7.5.x", "stsz counts samples in a fragmented track");
  const mvex = one(moov, "mvex");
  const trex = all(mvex, "trex").find((t) => t.track_id === trackId);
  if (!trex) fail("14496-12 8.8.3", `no trex for track ${trackId}`);

  // Protected tracks: sinf with frma, schm and tenc (23001-7 / 14496-12 8.12).
  // AV1 tracks list the av01 brand (AV1-ISOBMFF 2.1).
  if (entry === "av01" && !brands.includes("av01")) fail("AV1-ISOBMFF 2.1", "av01 track without the av01 brand");
  const sampleEntry = entries[0];
  const encrypted = entry === "encv" || entry === "enca" || entry === "enct" || entry === "encs";
  let ivSize = 0;
  if (encrypted) {
    const sinf = one(sampleEntry, "sinf");
    const schm = one(sinf, "schm");
    const tenc = one(one(sinf, "schi"), "tenc");
    if (!one(sinf, "frma")) fail("14496-12 8.12.2", "sinf without frma");
    if (!["cenc", "cbcs", "cens", "cbc1"].includes(schm?.scheme_type)) {
      fail("23001-7 4", `scheme ${schm?.scheme_type}`);
    }
    if (!tenc) fail("23001-7 8.2", "schi without tenc");
    ivSize = tenc?.default_Per_Sample_IV_Size ?? 0;
  }

  // Fragments: moof + mdat pairs (CMAF 7.3.2.4, 7.5.16-7.5.20).
  let fragments = 0;
  let samples = 0;
  let lastSequence = 0;
  let nextDecodeTime = null;
  for (let i = 2; i < top.length; i++) {
    const moof = top[i];
    if (moof.type !== "moof") continue;
    fragments++;
    const mdat = top[i + 1];
    if (mdat?.type !== "mdat") fail("CMAF 7.3.2.4", `moof #${fragments} not followed by mdat`);
    const sequence = one(moof, "mfhd")?.sequence_number;
    if (!(sequence > lastSequence)) fail("14496-12 8.8.5", `mfhd sequence ${sequence} after ${lastSequence}`);
    lastSequence = sequence ?? lastSequence;
    const trafs = all(moof, "traf");
    if (trafs.length !== 1) fail("CMAF 7.3.2.4", `moof #${fragments} has ${trafs.length} traf`);
    const traf = trafs[0];
    const tfhd = one(traf, "tfhd");
    if (tfhd?.track_id !== trackId) fail("14496-12 8.8.7", `tfhd track ${tfhd?.track_id}, trak ${trackId}`);
    const tfhdFlags = tfhd?.flags ?? 0;
    if (tfhdFlags & BASE_DATA_OFFSET_PRESENT) fail("CMAF 7.5.16", "tfhd has a base_data_offset");
    if (!(tfhdFlags & DEFAULT_BASE_IS_MOOF)) fail("CMAF 7.5.16", "tfhd without default-base-is-moof");
    const tfdt = one(traf, "tfdt");
    if (!tfdt) fail("CMAF 7.5.17", `moof #${fragments} without tfdt`);
    const truns = all(traf, "trun");
    if (truns.length !== 1) fail("CMAF 7.5.18", `moof #${fragments} has ${truns.length} trun`);
    const trun = truns[0];
    const flags = trun?.flags ?? 0;
    const count = trun?.sample_count ?? 0;
    if (count === 0) fail("CMAF 7.3.2.4", `moof #${fragments} has no samples`);
    samples += count;
    if (!(flags & DATA_OFFSET_PRESENT)) fail("CMAF 7.5.18", "trun without data_offset");
    // The samples fill the mdat's payload exactly, starting at its first byte.
    const payloadStart = (mdat?.start ?? 0) + (mdat?.hdr_size ?? 8);
    if (moof.start + (trun?.data_offset ?? 0) !== payloadStart) {
      fail("14496-12 8.8.8", `moof #${fragments} data_offset does not point at its mdat's payload`);
    }
    const sizeOf = (k) =>
      flags & SAMPLE_SIZE_PRESENT ? trun.sample_size[k] : tfhd?.default_sample_size ?? trex?.default_sample_size ?? 0;
    let total = 0;
    for (let k = 0; k < count; k++) total += sizeOf(k);
    if (mdat && total !== mdat.size - mdat.hdr_size) {
      fail("14496-12 8.8.8", `moof #${fragments} samples are ${total} bytes, mdat payload ${mdat.size - mdat.hdr_size}`);
    }
    const durationOf = (k) =>
      flags & SAMPLE_DURATION_PRESENT
        ? trun.sample_duration[k]
        : tfhdFlags & DEFAULT_SAMPLE_DURATION_PRESENT
          ? tfhd.default_sample_duration
          : trex?.default_sample_duration;
    let duration = 0;
    for (let k = 0; k < count; k++) {
      const d = durationOf(k);
      if (d === undefined) fail("14496-12 8.8.8", `moof #${fragments} sample ${k} has no duration`);
      duration += d ?? 0;
    }
    // Media segments of a track follow each other without gaps (CMAF 7.3.2.4: each
    // fragment's decode time is the previous one's plus its duration).
    const decodeTime = tfdt?.baseMediaDecodeTime;
    if (nextDecodeTime !== null && decodeTime !== nextDecodeTime) {
      fail("CMAF 7.3.2.4", `moof #${fragments} tfdt ${decodeTime}, previous ended at ${nextDecodeTime}`);
    }
    nextDecodeTime = decodeTime === undefined ? null : decodeTime + duration;
    // A video fragment starts with a sync sample (CMAF 7.3.2.4, SAP type 1 or 2).
    if (handler === "vide") {
      const first = flags & FIRST_SAMPLE_FLAGS_PRESENT
        ? trun.first_sample_flags
        : flags & SAMPLE_FLAGS_PRESENT
          ? trun.sample_flags[0]
          : tfhdFlags & DEFAULT_SAMPLE_FLAGS_PRESENT
            ? tfhd.default_sample_flags
            : trex?.default_sample_flags;
      if ((first ?? NON_SYNC) & NON_SYNC) fail("CMAF 7.3.2.4", `video moof #${fragments} does not start with a sync sample`);
    }
    // Protected fragments: senc with one entry per sample, saiz/saio pointing at it
    // (23001-7 7.2, CMAF 8.2.2).
    if (encrypted) {
      const senc = one(traf, "senc");
      const saiz = one(traf, "saiz");
      const saio = one(traf, "saio");
      if (!senc) fail("23001-7 7.2", `protected moof #${fragments} without senc`);
      if (!saiz || !saio) fail("CMAF 8.2.2", `protected moof #${fragments} without saiz/saio`);
      if (saiz && (saiz.sample_count ?? 0) !== count) fail("14496-12 8.7.8", `saiz counts ${saiz.sample_count}, trun ${count}`);
      if (saio && senc) {
        const offset = (saio.offset ?? [])[0];
        // saio counts from the moof (default-base-is-moof); senc's samples start after
        // its full-box header and sample_count.
        const sencSamples = senc.start + senc.hdr_size + 4;
        if (moof.start + offset !== sencSamples) {
          fail("14496-12 8.7.9", `moof #${fragments} saio points at ${moof.start + offset}, senc samples at ${sencSamples}`);
        }
      }
      // Each sample's auxiliary information is its IV, then with subsamples a 16-bit
      // count and 6 bytes per subsample (23001-7 7.2).
      const infoSize = saiz?.default_sample_info_size ?? 0;
      if (ivSize !== 0 && infoSize !== 0 && infoSize !== ivSize && (infoSize < ivSize + 8 || (infoSize - ivSize - 2) % 6 !== 0)) {
        fail("23001-7 7.2", `saiz size ${infoSize} is not an ${ivSize}-byte IV and whole subsample entries`);
      }
    }
  }
  if (fragments === 0) fail("CMAF 7.3.2.4", "no fragments");
  return { file, problems, fragments, samples, handler, entry };
}

for (const file of process.argv.slice(2)) {
  console.log(JSON.stringify(check(file)));
}
