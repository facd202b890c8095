//! The redactor's fixed tables: the key words that name a secret, the keys
//! that never do, the built-in secret shapes with the literals each match
//! holds, and the text form of a secret's assignment.

/// Key words that make a key a secret's, in their parts: a key holding
/// one, compared without case and with `_`, `-`, `.` or a space between
/// the parts or none (`api_key`, `apiKey`, `API Key`), names a secret.
pub(super) const SECRET_KEYS: &[&[&str]] = &[
    &["password"],
    &["passwd"],
    &["passphrase"],
    &["secret"],
    &["token"],
    &["api", "key"],
    &["authorization"],
    &["cookie"],
    &["session"],
    &["private", "key"],
    &["access", "key"],
    &["credential"],
];

/// The separators `normalized` drops between a key word's parts.
pub(super) const KEY_SEPARATORS: &[&str] = &["", "_", "-", ".", " "];

/// Each key word as `normalized` compares it (its parts joined).
pub(super) fn secret_keys() -> impl Iterator<Item = String> {
    SECRET_KEYS.iter().map(|parts| parts.concat())
}

/// Each key word in every spelling a key may use, for the search that
/// finds a key word without normalizing (and allocating) each key.
pub(super) fn key_spellings() -> Vec<String> {
    let mut spellings: Vec<String> = SECRET_KEYS
        .iter()
        .flat_map(|parts| {
            KEY_SEPARATORS
                .iter()
                .map(move |separator| parts.join(separator))
        })
        .collect();
    spellings.sort();
    spellings.dedup();
    spellings
}

/// The union of the shapes' anchors, in order, each once: the words of
/// every door's prefilter.
pub(super) fn anchor_union() -> Vec<&'static str> {
    let mut words: Vec<&'static str> = Vec::new();
    for anchor in SHAPE_ANCHORS.iter().flat_map(|(_, anchors)| anchors.iter()) {
        if !words.contains(anchor) {
            words.push(anchor);
        }
    }
    words
}

/// Keys a key word would otherwise catch that never hold a secret
/// (normalized): counts and limits of tokens, and the fields of the
/// sidecar's own records.
pub(super) const INNOCENT_KEYS: &[&str] = &[
    "maxtokens",
    "tokens",
    "tokencount",
    "totaltokens",
    "inputtokens",
    "outputtokens",
    "prompttokens",
    "completiontokens",
    "tokentype",
    "tokenizer",
];

/// Top-level fields of a log record that the sidecar or the snippet wrote:
/// the key rule leaves them alone (their shapes are still checked).
pub(super) const ENVELOPE: &[&str] = &["sessionId", "runId", "probeId", "hypothesisId", "source"];

/// Built-in secret shapes: (kind, pattern). Earlier kinds win where two
/// match the same text. A pattern with a group named `s` replaces only it.
pub(super) const SHAPES: &[(&str, &str)] = &[
    (
        "private-key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
    ),
    (
        "aws-access-key",
        r"(?-u:\b)(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?-u:\b)",
    ),
    (
        "github-token",
        r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})",
    ),
    ("gitlab-token", r"(?-u:\b)glpat-[A-Za-z0-9_-]{20,}"),
    ("slack-token", r"(?-u:\b)xox[abposre]-[A-Za-z0-9-]{10,}"),
    (
        "slack-webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
    ),
    (
        "stripe-key",
        r"(?-u:\b)(?:sk|rk|pk|whsec)_(?:live|test)_[A-Za-z0-9]{16,}",
    ),
    ("anthropic-key", r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}"),
    (
        "openai-key",
        r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    ),
    ("google-api-key", r"(?-u:\b)AIza[0-9A-Za-z_-]{35}"),
    ("npm-token", r"(?-u:\b)npm_[A-Za-z0-9]{36}"),
    ("pypi-token", r"(?-u:\b)pypi-[A-Za-z0-9_-]{50,}"),
    ("huggingface-token", r"(?-u:\b)hf_[A-Za-z0-9]{30,}"),
    (
        "sendgrid-key",
        r"(?-u:\b)SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
    ),
    ("digitalocean-token", r"(?-u:\b)do[por]_v1_[a-f0-9]{64}"),
    (
        "shopify-token",
        r"(?-u:\b)shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    ),
    (
        "telegram-bot-token",
        r"(?-u:\b)\d{8,10}:AA[A-Za-z0-9_-]{33}",
    ),
    ("mailgun-key", r"(?-u:\b)key-[0-9a-zA-Z]{32}(?-u:\b)"),
    (
        "jwt",
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    (
        "bearer",
        r"(?i)(?-u:\b)bearer\s+(?P<s>[A-Za-z0-9._~+/-]{12,}=*)",
    ),
    (
        "basic-auth",
        r"(?i)(?-u:\b)basic\s+(?P<s>[A-Za-z0-9+/]{12,}={0,2})",
    ),
    (
        "url-password",
        r"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:(?P<s>[^\s@/]+)@",
    ),
    (
        "cookie",
        r"(?i)(?-u:\b)(?:set-)?cookie\s*:\s*(?P<s>[^\r\n]+)",
    ),
];

/// The literals (compared without case) every match of a built-in shape
/// holds: a text is tried against the shapes whose anchors it holds, and
/// each shape is compiled the first time one is (`anchor_words` is their
/// union, the prefilter of every door).
pub(super) const SHAPE_ANCHORS: &[(&str, &[&str])] = &[
    ("private-key", &["private key"]),
    (
        "aws-access-key",
        &[
            "akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa",
        ],
    ),
    (
        "github-token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    ),
    ("gitlab-token", &["glpat-"]),
    ("slack-token", &["xox"]),
    ("slack-webhook", &["hooks.slack.com"]),
    ("stripe-key", &["_live_", "_test_"]),
    ("anthropic-key", &["sk-"]),
    ("openai-key", &["sk-"]),
    ("google-api-key", &["aiza"]),
    ("npm-token", &["npm_"]),
    ("pypi-token", &["pypi-"]),
    ("huggingface-token", &["hf_"]),
    ("sendgrid-key", &["sg."]),
    ("digitalocean-token", &["_v1_"]),
    ("shopify-token", &["shpat_", "shpca_", "shppa_", "shpss_"]),
    ("telegram-bot-token", &[":aa"]),
    ("mailgun-key", &["key-"]),
    ("jwt", &["eyj"]),
    ("bearer", &["bearer"]),
    // `(?i)` folds case as Unicode does: `ſ` is an `s`, the Kelvin sign
    // a `k`; the anchors compare ASCII case only, so they are anchors too.
    ("basic-auth", &["basic", "\u{17f}"]),
    ("url-password", &["://"]),
    ("cookie", &["cookie", "\u{212a}"]),
    (
        "assignment",
        &[
            "password",
            "passwd",
            "passphrase",
            "secret",
            "token",
            "api_key",
            "api-key",
            "apikey",
            "api key",
            "api.key",
            "access_key",
            "access-key",
            "accesskey",
            "access key",
            "access.key",
            "private_key",
            "private-key",
            "privatekey",
            "private key",
            "private.key",
            "credential",
            "session_id",
            "session-id",
            "sessionid",
            "authorization",
            "\u{17f}",
            "\u{212a}",
        ],
    ),
];

/// Key words that make `key = value` in text an assignment of a secret.
pub(super) const ASSIGNED_KEYS: &str = "password|passwd|passphrase|secret|token|api[_. -]?key|access[_. -]?key|private[_. -]?key|credential|session[_-]?id|authorization";

/// The value of an assignment (`key = value`, `"key": "value"`,
/// `key: Some("value")`, `key=b'value'`, `"key": {"value": "x"}`) in text:
/// a quoted value whole, spaces and all, else a word that is not only
/// digits (counts such as `max_tokens=4096` are not secrets). After an
/// HTTP scheme (`Authorization: Bearer abc123`) the word that follows it:
/// the scheme is not the secret (one of digits only is taken by
/// `past_scheme`).
pub(super) const ASSIGNED: &str = r#"[A-Za-z0-9_.-]*["']?\s*[:=]\s*(?:[A-Za-z_][A-Za-z0-9_:]*\(\s*)?(?:\{\s*"[^"\r\n]*"\s*:\s*)?(?:(?:bearer|basic|token)\s+)?(?P<s>[bru]?"[^"\r\n]+"|[bru]?'[^'\r\n]+'|[^\s"'&;,(){}\[\]<>]*[^\s"'&;,(){}\[\]<>0-9][^\s"'&;,(){}\[\]<>]*)"#;
