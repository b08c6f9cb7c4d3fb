/*
 * Iceberg 1.10's HTTPClient names this HttpClient 5.4 interface (only on its custom-TLS path); Debian's HttpClient is
 * 5.2, which lacks it, and the JVM's verifier loads it when it links HTTPClient. This empty stand-in lets the REST
 * client link; a custom TLS configurer (rest.client.tls.configurer-impl) is not supported with these jars.
 */
package org.apache.iceberg.shaded.org.apache.hc.client5.http.ssl;

public interface TlsSocketStrategy {}
