"""Inference: Gen / PPL / CLP over prompt records, batched, through the response cache."""
from promptweave.infer.budget import fit_shots
from promptweave.infer.cache import ResponseCache, request_key
from promptweave.infer.clp import CLPResult, infer_clp
from promptweave.infer.dispatch import CachedCaller, model_identity
from promptweave.infer.gen import GenResult, infer_gen
from promptweave.infer.ppl import PPLResult, average_nll, infer_ppl
from promptweave.infer.records import Record, RecordLike

__all__ = ["fit_shots", "ResponseCache", "request_key", "CachedCaller", "model_identity", "Record", "RecordLike",
           "infer_gen", "GenResult", "infer_ppl", "PPLResult", "average_nll", "infer_clp", "CLPResult"]
