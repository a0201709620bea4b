//! Sequences matched part by part: rungs and languages, and the refusals naming the part.
