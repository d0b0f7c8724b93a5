"""The results file: the record format, its writer and its reader.

A run is written as JSONL (a manifest, one record per sample, a summary); this
stage writes those records safely, reads them back and checks them.
"""
