vcl 4.1;

# A shared cache in front of the fuel price service (README "Behind a shared cache", D70, D71).
# Stock Varnish 7 from Debian (`apt-get install varnish`), no extra vmods:
#
#   varnishd -a :80 -f /etc/varnish/default.vcl -s malloc,256m
#
# Answers are kept as long as the service's Cache-Control says (s-maxage: a week) and varied as
# its Vary says; a committed ingest or withdrawal drops exactly the answers it affects through a
# PURGE with their tags (the service's CACHE_PURGE_URL points here, CACHE_PURGE_TOKEN guards it).

import std;
import directors;
import proxy;

probe health {
    .url = "/v1/health";
    .interval = 5s;
    .timeout = 2s;
    .window = 5;
    .threshold = 3;
}

# One backend per replica, each added to the director below; the service's default port.
backend replica_1 {
    .host = "127.0.0.1";
    .port = "8000";
    .probe = health;
    # An upload may take the service's REQUEST_TIMEOUT_MS (120 s) and then its write.
    .first_byte_timeout = 130s;
}

# Who may PURGE: the replicas' addresses (keep in step with where they run).
acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_init {
    new replicas = directors.round_robin();
    replicas.add_backend(replica_1);
}

sub vcl_recv {
    set req.backend_hint = replicas.backend();

    if (req.method == "PURGE") {
        call purge_tags;
    }

    # The client's address as this cache saw it (or as a PROXY-protocol front end reported it),
    # never what the client wrote: the service rate-limits by the left-most X-Forwarded-For.
    set req.http.X-Forwarded-For = client.ip;
    # The scheme the client used, from the connection (a TLS front end says so over PROXY v2).
    if (proxy.is_ssl()) {
        set req.http.X-Forwarded-Proto = "https";
    } else {
        set req.http.X-Forwarded-Proto = "http";
    }
    # The Host (in the cache key, lower-cased by the built-in rules) names the site, nothing else.
    unset req.http.X-Forwarded-Host;
    unset req.http.X-Forwarded-Port;
    unset req.http.X-Forwarded-Prefix;
    unset req.http.Forwarded;
    unset req.http.X-Real-IP;

    if (req.method == "GET" || req.method == "HEAD") {
        # The service reads no cookie; a browser's cookies for the domain must not bypass the cache.
        unset req.http.Cookie;
        # Equivalent queries share one entry (the service reads parameters in any order).
        set req.url = std.querysort(req.url);
        call normalise_origin;
        if (req.url ~ "^/v1/prices(\?|$)") {
            call normalise_accept;
        }
    }
    # Accept-Encoding needs nothing here: Varnish asks the service for gzip, keeps that, and
    # sends it to clients that take gzip, unzipped to the others.
}

# PURGE with `Surrogate-Key: <tags>`: every kept answer carrying one of those tags is dropped.
sub purge_tags {
    if (client.ip !~ purgers) {
        return (synth(403, "Forbidden"));
    }
    # With CACHE_PURGE_TOKEN in varnishd's environment, a purge must also carry it.
    # (getenv gives no string at all when the variable is unset, an empty one when it is empty.)
    if (std.getenv("CACHE_PURGE_TOKEN") && std.getenv("CACHE_PURGE_TOKEN") != "" &&
        req.http.Authorization != "Bearer " + std.getenv("CACHE_PURGE_TOKEN")) {
        return (synth(401, "Unauthorized"));
    }
    if (req.http.Surrogate-Key !~ "^[a-z0-9-]+( [a-z0-9-]+)*$") {
        return (synth(400, "Bad Request"));
    }
    # A ban on the object's own header, so the ban lurker clears matching objects in the background.
    if (!std.ban("obj.http.Surrogate-Key ~ (^|\s)(" + regsuball(req.http.Surrogate-Key, " ", "|") + ")(\s|$)")) {
        return (synth(400, std.ban_error()));
    }
    return (synth(200, "Purged"));
}

# CORS answers vary on Origin; an origin the service does not allow gets the same answer as none,
# so only the allowed ones are kept apart (keep in step with the service's CORS_ORIGINS).
sub normalise_origin {
    if (req.http.Origin ~ "^(https://fuelkenya\.com|https://www\.fuelkenya\.com|http://localhost:3000)$") {
        set req.http.Origin = req.http.Origin;
    } else {
        unset req.http.Origin;
    }
}

# /v1/prices answers CSV to an Accept that prefers text/csv, JSON otherwise, and varies on
# Accept. Values whose answer is certain become one of two; any other is kept as sent (Vary then
# keeps it apart, so it cannot change another client's answer).
sub normalise_accept {
    if (!req.http.Accept || req.http.Accept ~ "^\s*$") {
        unset req.http.Accept;
    } elsif (req.http.Accept ~ "(?i)^\s*text/csv\s*$") {
        set req.http.Accept = "text/csv";
    } elsif (req.http.Accept !~ "(?i)csv|text/\*" && (req.http.Accept !~ "\*/\*" || req.http.Accept !~ ";")) {
        # Names neither CSV nor text/*, and no */* that could outweigh JSON: JSON for certain.
        unset req.http.Accept;
    }
}

sub vcl_backend_response {
    # Errors, 429s and health are `no-store` (the built-in rules then keep nothing); this makes
    # sure of it for any status a replica or a hop in between might send.
    if (beresp.status >= 400) {
        set beresp.ttl = 1s;
        set beresp.uncacheable = true;
        return (deliver);
    }
}

sub vcl_deliver {
    # Rate-limit counters belong to the client whose request reached a replica, never to the
    # clients a kept copy is later served to.
    if (obj.hits > 0) {
        unset resp.http.RateLimit-Limit;
        unset resp.http.RateLimit-Remaining;
        unset resp.http.RateLimit-Reset;
        unset resp.http.Retry-After;
    }
}

# The service's error envelope, not an HTML page, for what this cache answers itself.
sub vcl_synth {
    set resp.http.Content-Type = "application/json; charset=utf-8";
    set resp.http.Cache-Control = "no-store";
    set resp.body = {"{"detail":""} + resp.reason + {"""} + "}";
    return (deliver);
}

sub vcl_backend_error {
    set beresp.http.Content-Type = "application/json; charset=utf-8";
    set beresp.http.Cache-Control = "no-store";
    set beresp.http.Retry-After = "5";
    set beresp.body = {"{"detail":"Service Unavailable""} + "}";
    return (deliver);
}
