//! The exporter's HTTP side: `/metrics` in the format the scraper asks for
//! in `Accept` (OpenMetrics, else the Prometheus text format), and a small
//! page at `/` that says what this is. Every answer is a document rendered
//! before the scrape came, so it costs a copy of a reference, never a
//! reading of ZooKeeper.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::output::prometheus::Exposition;

/// The documents a scrape is served, in both formats.
#[derive(Clone, Default)]
pub(super) struct Published {
    pub text: Bytes,
    pub open_metrics: Bytes,
}

/// The page at `/`.
const INDEX: &str = "<!DOCTYPE html>\n<html><head><title>zklock exporter</title></head><body>\n\
<h1>zklock exporter</h1>\n<p>Metrics of the ZooKeeper locks under one path, kept current \
from a live watch: <a href=\"/metrics\">/metrics</a>.</p>\n</body></html>\n";

/// Answers every connection on `listener` until dropped.
pub(super) async fn serve(listener: TcpListener, published: Arc<Mutex<Published>>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(err) => {
                // Out of descriptors, say: the next accept may work.
                tracing::warn!("accepting a connection failed: {err}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let published = Arc::clone(&published);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let answer = respond(&request, &published);
                async move { Ok::<_, Infallible>(answer) }
            });
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(err) = connection.await {
                tracing::debug!("an HTTP connection ended: {err}");
            }
        });
    }
}

fn respond(request: &Request<Incoming>, published: &Mutex<Published>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
    }
    match request.uri().path() {
        "/metrics" => {
            let format = asked_format(request);
            let published = published.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let body = match format {
                Exposition::Text => published.text,
                Exposition::OpenMetrics => published.open_metrics,
            };
            answer(StatusCode::OK, format.content_type(), body)
        }
        "/" => answer(
            StatusCode::OK,
            "text/html; charset=utf-8",
            Bytes::from_static(INDEX.as_bytes()),
        ),
        _ => plain(
            StatusCode::NOT_FOUND,
            "not found: the metrics are at /metrics\n",
        ),
    }
}

/// OpenMetrics when the scraper lists it in `Accept` (Prometheus does,
/// first), else the text format every scraper reads.
fn asked_format(request: &Request<Incoming>) -> Exposition {
    let accept = request
        .headers()
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok());
    let open_metrics = accept
        .flat_map(|value| value.split(','))
        .any(|choice| choice.trim().starts_with("application/openmetrics-text"));
    if open_metrics {
        Exposition::OpenMetrics
    } else {
        Exposition::Text
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    answer(
        status,
        "text/plain; charset=utf-8",
        Bytes::from_static(text.as_bytes()),
    )
}

fn answer(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
