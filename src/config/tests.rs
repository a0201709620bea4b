//! Stories of resolving settings: precedence, the file's keys, the checks, and the
//! reference rows made from the declarations.

use std::path::PathBuf;

use super::*;

/// A config file holding `text`, in a folder of its own for this test (`tag`).
fn config_file(tag: &str, text: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("vodpack-config-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("vodpack.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn flags_win_over_the_file_which_wins_over_defaults() {
    let (dir, path) = config_file("plain", "segment-duration-ms = 4000\nroot = \"/media\"\n");
    let args = SettingsArgs {
        root: Some("/override".into()),
        config: Some(path),
        ..Default::default()
    };
    let s = args.resolve().unwrap();
    assert_eq!(s.segment_duration_ms, 4000);
    assert_eq!(s.root, PathBuf::from("/override"));
    assert_eq!(s.stream_chunk_bytes, 64 * 1024);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn nginx_vod_locations_come_from_flags_or_the_file_and_are_checked() {
    let parsed: NginxVodLocations = "hls=/hls/, dash=/dash/, thumb=/t/".parse().unwrap();
    assert_eq!(parsed.hls.as_deref(), Some("/hls/"));
    assert_eq!(parsed.hlsts, None);
    assert_eq!(parsed.dash.as_deref(), Some("/dash/"));
    assert_eq!(parsed.thumb.as_deref(), Some("/t/"));
    for bad in [
        "hls=/hls",
        "mss=/mss/",
        "hls=/",
        "hls=/vod/x/",
        "hls=/a/,dash=/a/b/",
        "hls=/a/,hls=/b/",
        "thumb=/a/,dash=/a/",
    ] {
        assert!(bad.parse::<NginxVodLocations>().is_err(), "{bad}");
    }
    let (dir, path) = config_file("nginx", "nginx-vod-locations = \"hlsts=/ts/\"\n");
    let args = SettingsArgs {
        config: Some(path.clone()),
        ..Default::default()
    };
    let s = args.resolve().unwrap();
    assert_eq!(s.nginx_vod_locations.hlsts.as_deref(), Some("/ts/"));
    std::fs::write(&path, "nginx-vod-locations = \"hls=hls\"\n").unwrap();
    assert!(matches!(
        args.resolve(),
        Err(ConfigError::Invalid {
            name: "nginx-vod-locations",
            ..
        })
    ));
    let _ = std::fs::remove_dir_all(dir);
}

/// Given nginx-vod locations and an encrypted output, then only AES-128 MPEG-TS under an
/// `hlsts` location is accepted (its names are numbered as the module numbers them); an
/// encrypted output under any other location is refused, since its names would answer
/// other spans than the module's, or clear what the native URLs encrypt. A location whose
/// output stays clear is accepted.
#[test]
fn nginx_vod_locations_take_only_aes_128_ts_of_the_encrypted_outputs() {
    for (locations, encryption, accepted) in [
        ("hls=/hls/", "hls=aes-128", false),
        ("hls=/hls/", "hls=sample-aes", false),
        ("dash=/dash/", "dash=cenc", false),
        ("hlsts=/ts/", "hls=sample-aes", false),
        ("hlsts=/ts/,dash=/dash/", "hls=aes-128,dash=cenc", false),
        ("hlsts=/ts/", "hls=aes-128", true),
        ("hlsts=/ts/,dash=/dash/,thumb=/t/", "hls=aes-128", true),
        ("hls=/hls/", "dash=cenc", true),
    ] {
        let args = SettingsArgs {
            nginx_vod_locations: Some(locations.parse().unwrap()),
            protect: crate::crypto::settings::ProtectArgs {
                encryption: Some(encryption.into()),
                key_secret: Some("0123456789abcdef0123456789".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let resolved = args.resolve();
        match accepted {
            true => assert!(resolved.is_ok(), "{locations} {encryption}: {resolved:?}"),
            false => assert!(
                matches!(
                    resolved,
                    Err(ConfigError::Invalid {
                        name: "nginx-vod-locations",
                        ..
                    })
                ),
                "{locations} {encryption}: {resolved:?}"
            ),
        }
    }
}

/// Given no segment settings, then the nginx-vod locations cut to the module's 10 s and
/// `/vod/` to 6 s; set to the server's duration, they share its titles (no cut of their
/// own); out of range, refused.
#[test]
fn the_nginx_vod_segment_duration_is_the_module_s_default_and_checked() {
    let defaults = SettingsArgs::default().resolve().unwrap();
    assert_eq!(defaults.nginx_vod_segment_duration_ms, 10_000);
    assert_eq!(defaults.segment_duration_ms, 6000);
    assert_eq!(defaults.nginx_vod_cut_ms(), Some(10_000));
    let (dir, path) = config_file(
        "nginx-duration",
        "segment-duration-ms = 4000\nnginx-vod-segment-duration-ms = 4000\n",
    );
    let args = SettingsArgs {
        config: Some(path.clone()),
        ..Default::default()
    };
    assert_eq!(args.resolve().unwrap().nginx_vod_cut_ms(), None);
    std::fs::write(&path, "nginx-vod-segment-duration-ms = 99\n").unwrap();
    assert!(matches!(
        args.resolve(),
        Err(ConfigError::Invalid {
            name: "nginx-vod-segment-duration-ms",
            ..
        })
    ));
    let _ = std::fs::remove_dir_all(dir);
}

/// Given the DASH profile from the file, then it resolves (the default profile unset);
/// with `dvb`, a segment duration outside DVB's 1 to 15 s is refused.
#[test]
fn the_dash_profile_comes_from_the_file_and_dvb_bounds_segments() {
    let defaults = SettingsArgs::default().resolve().unwrap();
    assert_eq!(defaults.dash_profile, crate::config::DashProfile::Default);
    let (dir, path) = config_file("dash-profile", "dash-profile = \"dvb\"\n");
    let args = SettingsArgs {
        config: Some(path.clone()),
        ..Default::default()
    };
    assert_eq!(
        args.resolve().unwrap().dash_profile,
        crate::config::DashProfile::Dvb
    );
    std::fs::write(&path, "dash-profile = \"dvb\"\nsegment-duration-ms = 500\n").unwrap();
    assert!(matches!(
        args.resolve(),
        Err(ConfigError::Invalid {
            name: "segment-duration-ms",
            ..
        })
    ));
    let _ = std::fs::remove_dir_all(dir);
}

/// Given worker threads, load buffers and a local merge gap from the file, a flag
/// winning over the file, then they resolve as given; out of range, they are refused;
/// unset, the runtime's default (a worker per core), 16 MiB of load buffers and no
/// local over-read stand.
#[test]
fn worker_threads_load_buffers_and_local_gaps_resolve_and_are_checked() {
    let (dir, path) = config_file(
        "wt",
        "worker-threads = 3\nload-buffer-bytes = 0\nlocal-merge-gap-bytes = 8192\n",
    );
    let from_file = SettingsArgs {
        config: Some(path.clone()),
        ..Default::default()
    };
    let s = from_file.resolve().unwrap();
    assert_eq!((s.server.worker_threads, s.load_buffer_bytes), (Some(3), 0));
    assert_eq!(s.local_merge_gap_bytes, 8192);
    let flag = SettingsArgs {
        worker_threads: Some(1),
        ..from_file
    };
    assert_eq!(flag.resolve().unwrap().server.worker_threads, Some(1));
    let unset = SettingsArgs::default().resolve().unwrap();
    assert_eq!(unset.server.worker_threads, None);
    assert_eq!(unset.load_buffer_bytes, 16 * 1024 * 1024);
    assert_eq!(unset.local_merge_gap_bytes, 16 * 1024);

    for (bad, name) in [
        ("worker-threads = 0\n", "worker-threads"),
        ("worker-threads = 5000\n", "worker-threads"),
        ("load-buffer-bytes = 2147483648\n", "load-buffer-bytes"),
        ("local-merge-gap-bytes = 262145\n", "local-merge-gap-bytes"),
    ] {
        std::fs::write(&path, bad).unwrap();
        let args = SettingsArgs {
            config: Some(path.clone()),
            ..Default::default()
        };
        assert!(
            matches!(args.resolve(), Err(ConfigError::Invalid { name: n, .. }) if n == name),
            "{bad}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_unknown_key_in_the_file_is_an_error() {
    let (dir, path) = config_file("bad", "segment-seconds = 4\n");
    let args = SettingsArgs {
        config: Some(path),
        ..Default::default()
    };
    assert!(matches!(args.resolve(), Err(ConfigError::Parse { .. })));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn object_store_settings_come_from_flags_and_file_and_are_checked() {
    let (dir, path) = config_file(
        "s3",
        "source = \"s3://bucket/prefix\"\n\
         s3-endpoint = \"http://127.0.0.1:9000\"\n\
         source-allow-http = true\n\
         source-timeout-ms = 500\n\
         source-retries = 1\n\
         source-merge-gap-bytes = 0\n\
         source-identity-ttl-ms = 0\n",
    );
    let args = SettingsArgs {
        source_retries: Some(5),
        config: Some(path.clone()),
        ..Default::default()
    };
    let s = args.resolve().unwrap();
    assert_eq!(s.source.as_deref(), Some("s3://bucket/prefix"));
    let o = &s.object_store;
    assert_eq!(o.s3_endpoint.as_deref(), Some("http://127.0.0.1:9000"));
    assert!(o.allow_http);
    assert_eq!((o.timeout_ms, o.retries), (500, 5));
    assert_eq!((o.max_merge_gap_bytes, o.identity_ttl_ms), (0, 0));
    assert_eq!(o.connect_timeout_ms, 3000);

    for bad in [
        "source-timeout-ms = 0\n",
        "source-retries = 99\n",
        "s3-endpoint = \"127.0.0.1:9000\"\n",
    ] {
        std::fs::write(&path, bad).unwrap();
        let args = SettingsArgs {
            config: Some(path.clone()),
            ..Default::default()
        };
        assert!(
            matches!(args.resolve(), Err(ConfigError::Invalid { .. })),
            "{bad}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn allow_http_is_a_flag_that_may_take_a_value() {
    use clap::Parser;
    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        settings: SettingsArgs,
    }
    let parse = |argv: &[&str]| {
        Serve::try_parse_from(argv)
            .unwrap()
            .settings
            .source_allow_http
    };
    assert_eq!(parse(&["serve", "--source-allow-http"]), Some(true));
    assert_eq!(
        parse(&["serve", "--source-allow-http", "false"]),
        Some(false)
    );
    assert_eq!(parse(&["serve", "--source-allow-http", "yes"]), Some(true));
}

/// The `--help` line of `flag` as clap gives it.
fn help_of(flag: &str) -> String {
    use clap::{Args, Command};
    let command = SettingsArgs::augment_args(Command::new("serve"));
    let help = (command.get_arguments())
        .find(|arg| arg.get_long() == Some(flag))
        .and_then(|arg| arg.get_help())
        .map(ToString::to_string);
    help.unwrap_or_else(|| panic!("--{flag} has no help"))
}

/// Given the declarations, then `--help` shows each default as `Settings::default()` has
/// it, in words where the default is no value, and nothing where there is none to show.
#[test]
fn the_help_shows_the_defaults_the_code_sets() {
    assert_eq!(
        help_of("stream-chunk-bytes"),
        "Size of one streamed body chunk in bytes [default: 65536]"
    );
    assert_eq!(
        help_of("listen"),
        "Address and port to listen on [default: 127.0.0.1:8080]"
    );
    assert_eq!(help_of("log-format"), "Log format [default: text]");
    assert_eq!(
        help_of("source-identity-ttl-ms"),
        "How long a file's or object's identity is reused, in milliseconds [default: 1000]"
    );
    assert_eq!(
        help_of("worker-threads"),
        "Threads serving connections [default: one per available core]"
    );
    assert_eq!(
        help_of("preview-hls-js-url"),
        "Where the preview page loads hls.js from [default: vodpack's own copy]"
    );
    assert_eq!(
        help_of("source"),
        "Object-store URL (s3://bucket/prefix, gs://, az://, https://)"
    );
}

/// Given the declarations, then the reference rows give each default as the code has it
/// (from the layer's own defaults, such as the object store's), the protection settings'
/// as their `--help` gives them, and every config file key is a row.
#[test]
fn the_reference_rows_show_the_code_s_defaults() {
    let default_of = |key: &str| {
        SETTINGS
            .iter()
            .find(|(name, _, _, _)| *name == key)
            .map(|(_, _, default, _)| default.as_str())
    };
    assert_eq!(default_of("max-moov-bytes"), Some("134217728"));
    assert_eq!(default_of("source-retries"), Some("3"));
    assert_eq!(default_of("drain-timeout-ms"), Some("25000"));
    assert_eq!(default_of("source"), Some("(none)"));
    assert_eq!(
        default_of("preview"),
        Some("(on for a folder, off for a bucket)")
    );
    assert_eq!(
        default_of("preview-dash-js-url"),
        Some("(vodpack's own copy)")
    );
    assert_eq!(default_of("token-skew-secs"), Some("30"));
    assert_eq!(default_of("key-secret"), Some("(none)"));
    for key in FILE_KEYS {
        assert!(default_of(key).is_some(), "{key}");
    }
}

/// Given a file with every key, each set to a value of the wrong type, then every key is
/// known to the file reader (the error is the value's, never an unknown key).
#[test]
fn every_file_key_is_read_from_the_file() {
    for key in FILE_KEYS {
        let (dir, path) = config_file("keys", &format!("{key} = [1]\n"));
        let args = SettingsArgs {
            config: Some(path),
            ..Default::default()
        };
        let error = args.resolve().unwrap_err();
        let _ = std::fs::remove_dir_all(dir);
        assert!(matches!(error, ConfigError::Parse { .. }), "{key}: {error}");
        assert!(
            !error.to_string().contains("unknown field"),
            "{key}: {error}"
        );
    }
}

/// Given a file with a storyboard grid, interval and tile width, they resolve; a grid
/// past 20 a side, an interval under 100 ms or a tile under 16 px is refused, naming the
/// setting (so a sheet's pixels and a title's cues stay bounded).
#[test]
fn storyboard_settings_resolve_and_are_bounded() {
    let (dir, path) = config_file(
        "sb",
        "storyboard-grid = \"4x3\"\nstoryboard-interval-ms = 2000\nstoryboard-tile-width = 240\n",
    );
    let args = SettingsArgs {
        config: Some(path.clone()),
        ..Default::default()
    };
    let s = args.resolve().unwrap();
    let grid = (s.storyboards.grid.columns, s.storyboards.grid.rows);
    assert_eq!(grid, (4, 3));
    assert_eq!(s.storyboards.interval_ms, 2000);
    assert_eq!(s.storyboards.tile_width, 240);
    assert!(!s.storyboards.signalled);
    for (bad, name) in [
        ("storyboard-grid = \"21x2\"\n", "storyboard-grid"),
        ("storyboard-grid = \"0x2\"\n", "storyboard-grid"),
        ("storyboard-grid = \"10\"\n", "storyboard-grid"),
        ("storyboard-interval-ms = 99\n", "storyboard-interval-ms"),
        ("storyboard-tile-width = 8\n", "storyboard-tile-width"),
    ] {
        std::fs::write(&path, bad).unwrap();
        let args = SettingsArgs {
            config: Some(path.clone()),
            ..Default::default()
        };
        assert!(
            matches!(args.resolve(), Err(ConfigError::Invalid { name: n, .. }) if n == name),
            "{bad}: {:?}",
            args.resolve()
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Given `dash-subtitle-format` in the file, then it is read in its spelling
/// (`webvtt-file`, `imsc1`); unset, it is `wvtt`; a value that is none of them is refused.
#[test]
fn the_dash_subtitle_format_is_read_from_the_file() {
    use crate::config::DashSubtitleFormat;
    for (text, want) in [
        (
            "dash-subtitle-format = \"webvtt-file\"\n",
            DashSubtitleFormat::WebvttFile,
        ),
        (
            "dash-subtitle-format = \"imsc1\"\n",
            DashSubtitleFormat::Imsc1,
        ),
        ("", DashSubtitleFormat::Wvtt),
    ] {
        let (dir, path) = config_file("dash-subtitles", text);
        let args = SettingsArgs {
            config: Some(path),
            ..Default::default()
        };
        assert_eq!(args.resolve().unwrap().dash_subtitle_format, want, "{text}");
        let _ = std::fs::remove_dir_all(dir);
    }
    let (dir, path) = config_file("dash-subtitles-bad", "dash-subtitle-format = \"srt\"\n");
    let args = SettingsArgs {
        config: Some(path),
        ..Default::default()
    };
    assert!(args.resolve().is_err());
    let _ = std::fs::remove_dir_all(dir);
}
