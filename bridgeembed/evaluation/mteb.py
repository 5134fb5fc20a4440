"""MTEB 2.x wrapper: a `BridgeEncoder` as an mteb `EncoderProtocol`, with its `ModelMeta`.

    >>> import mteb
    >>> from bridgeembed.evaluation.mteb import BridgeMTEBEncoder
    >>> model = BridgeMTEBEncoder("general-m2m")                  # or a BridgeEncoder, or a checkpoint path
    >>> mteb.evaluate(model, mteb.get_tasks(tasks=["STS17"], languages=["deu"]))

A bridge model has one encoder per language, so every call must name its language. mteb does not
pass one; it passes the task's `hf_subset`, and the task metadata maps each subset to the languages
it holds (`eval_langs`, e.g. {"en-de": ["eng-Latn", "deu-Latn"]}, or one list for every subset).
The wrapper turns those ISO 639-3 + script tags into the model's codes (ISO 639-1: "deu-Latn" -> "de").
A subset with several languages the model knows (pair subsets such as "deu_Latn-eng_Latn" in
bitext mining or cross-lingual STS) gives no way to tell which text is which: every text is encoded
as the first of those languages, with a warning. mteb's "parallel" bitext layout passes the column
name ("eng_Latn") as the subset and is handled exactly. `languages={...}` overrides the mapping.

mteb is imported lazily: `import bridgeembed` never needs it (`pip install bridgeembed[mteb]`).
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from bridgeembed.encoders.protocol import HeadSpec
from bridgeembed.errors import UnknownLanguageError
from bridgeembed.evaluation.languages import check_language, known_languages
from bridgeembed.evaluation.models import load_encoder
from bridgeembed.pretrained import DEFAULT_MODEL

if TYPE_CHECKING:  # for annotations only
    import torch

    from bridgeembed.encoders.protocol import Heads, SentenceEncoder

logger = logging.getLogger(__name__)

INSTALL_HINT = "the MTEB wrapper needs mteb 2.x: pip install bridgeembed[mteb]"

# ISO 639-1 (the codes bridge models use) -> the "iso639-3-Script" tag mteb writes in eval_langs.
ISO1_TO_MTEB = {
    "ar": "ara-Arab", "bg": "bul-Cyrl", "ca": "cat-Latn", "cs": "ces-Latn", "cy": "cym-Latn", "da": "dan-Latn",
    "de": "deu-Latn", "el": "ell-Grek", "en": "eng-Latn", "es": "spa-Latn", "et": "est-Latn", "eu": "eus-Latn",
    "fa": "fas-Arab", "fi": "fin-Latn", "fr": "fra-Latn", "ga": "gle-Latn", "gl": "glg-Latn", "he": "heb-Hebr",
    "hi": "hin-Deva", "hr": "hrv-Latn", "hu": "hun-Latn", "id": "ind-Latn", "is": "isl-Latn", "it": "ita-Latn",
    "ja": "jpn-Jpan", "ko": "kor-Hang", "lt": "lit-Latn", "lv": "lav-Latn", "mt": "mlt-Latn", "nb": "nob-Latn",
    "nl": "nld-Latn", "nn": "nno-Latn", "no": "nor-Latn", "pl": "pol-Latn", "pt": "por-Latn", "ro": "ron-Latn",
    "ru": "rus-Cyrl", "sk": "slk-Latn", "sl": "slv-Latn", "sq": "sqi-Latn", "sr": "srp-Cyrl", "sv": "swe-Latn",
    "th": "tha-Thai", "tr": "tur-Latn", "uk": "ukr-Cyrl", "vi": "vie-Latn", "zh": "zho-Hans",
}
# ISO 639-3 -> ISO 639-1, with the individual-language codes mteb tasks also use for macrolanguages.
ISO3_TO_ISO1 = {tag.split("-")[0]: code for code, tag in ISO1_TO_MTEB.items()} | {
    "arb": "ar", "cmn": "zh", "ekk": "et", "lvs": "lv", "pes": "fa", "als": "sq",
}

CITATION = """@article{vazquez-etal-2020-systematic,
  title = {A Systematic Study of Inner-Attention-Based Sentence Representations in Multilingual
           Neural Machine Translation},
  author = {V{\\'a}zquez, Ra{\\'u}l and Raganato, Alessandro and Creutz, Mathias and Tiedemann, J{\\"o}rg},
  journal = {Computational Linguistics},
  volume = {46},
  number = {2},
  pages = {387--424},
  year = {2020},
  doi = {10.1162/coli_a_00377}
}"""


def require_mteb() -> ModuleType:
    """The mteb module, or an ImportError that says how to install it."""
    try:
        import mteb
        from mteb.models.model_meta import ModelMeta  # noqa: F401  (absent before mteb 2)
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error
    return mteb


def _tag_key(tag: str) -> str:
    """"deu_Latn", "deu-Latn" -> "deu-Latn": mteb writes subsets with "_" and languages with "-"."""
    return tag.replace("_", "-")


class TaskLanguageError(UnknownLanguageError):
    """No language of an mteb task subset is one the model knows."""

    def __init__(self, task: str, subset: str, tags: Sequence[str], known: Iterable[str]) -> None:
        self.lang, self.known = ", ".join(tags), sorted(known)
        ValueError.__init__(
            self, f"task {task!r}, subset {subset!r} is in {', '.join(tags)}; the model knows "
                  f"{', '.join(self.known) or 'no languages'}: pass languages={{'{tags[0]}': CODE}} to map it")


class BridgeMTEBEncoder:
    """An mteb 2.x `EncoderProtocol` over a `BridgeEncoder`; `mteb_model_meta` describes it.

    model: a BridgeEncoder (or any encoder of bridgeembed.encoders.protocol), or a `--model` spec: a shipped
        model's name, a path, `untrained:NAME` (see `bridgeembed.evaluation.models`).
    heads: the forms of `HeadSpec`: "mean" gives (N, d) as in the paper; one head index (N, d); "each"
        or a list of indices the chosen heads concatenated, (N, len * d), since mteb expects one
        flat vector per text.
    languages: overrides of the language mapping, {key: model code}; a key is a subset name, an mteb
        tag ("eng-Latn") or an ISO 639-3 code ("eng").
    batch_size: sentences per forward pass; None follows mteb's `encode_kwargs` (else 64).
    """

    def __init__(self, model: SentenceEncoder | str | Path = DEFAULT_MODEL, revision: str | None = None, *,
                 device: str | torch.device | None = None, heads: Heads = "mean", batch_size: int | None = None,
                 languages: Sequence[str] | None = None, normalize: bool = False, name: str | None = None,
                 license: str | None = None, open_weights: bool = True) -> None:
        require_mteb()
        spec = HeadSpec.parse(heads)
        if isinstance(model, (str, Path)):
            model = load_encoder(str(model), device=device)
        spec = spec.resolve(model)
        self.encoder, self.heads, self.batch_size, self.normalize = model, spec.encoder_heads, batch_size, normalize
        self.known = known_languages(model)  # None: the encoder takes any code
        self.language_map = {_tag_key(key): code for key, code in (languages or {}).items()}
        for code in dict.fromkeys(self.language_map.values()):
            check_language(model, code)
        self.embed_dim = model.dim * len(spec.views)  # chosen heads are concatenated
        self._warned = set()
        self.mteb_model_meta = bridge_model_meta(self, name=name, revision=revision, license=license,
                                                 open_weights=open_weights)

    def __repr__(self) -> str:
        return f"BridgeMTEBEncoder({self.mteb_model_meta.name!r}, heads={self.heads!r}, embed_dim={self.embed_dim})"

    # --- languages ----------------------------------------------------------------------------
    def model_code(self, tag: str) -> str | None:
        """An mteb tag ("deu-Latn", "deu_Latn", "deu") -> the model's code ("de"), or None."""
        tag = _tag_key(tag)
        iso3 = tag.split("-")[0]
        for key in (tag, iso3):
            if key in self.language_map:
                return self.language_map[key]
        code = ISO3_TO_ISO1.get(iso3.lower(), iso3)
        return code if self.known is None or code in self.known else None

    def mteb_languages(self) -> list:
        """The model's languages as mteb tags (codes with no known tag are left out)."""
        tags = [key for key in self.language_map if re.fullmatch(r"[a-z]{3}-[A-Z][a-z]{3}", key)]
        tags += [ISO1_TO_MTEB[code] for code in (self.known or []) if code in ISO1_TO_MTEB]
        return list(dict.fromkeys(tags))

    def language_for(self, task_metadata: Any, hf_subset: str) -> str:
        """The model code to encode a subset's texts with (see the module docstring)."""
        if _tag_key(hf_subset) in self.language_map:  # keys are stored with "-" (see _tag_key)
            return self.language_map[_tag_key(hf_subset)]
        subsets = task_metadata.hf_subsets_to_langscripts
        tags = list(subsets.get(hf_subset) or [hf_subset])  # parallel bitext passes a column: "eng_Latn"
        codes = list(dict.fromkeys(c for c in map(self.model_code, tags) if c is not None))
        if not codes:
            raise TaskLanguageError(task_metadata.name, hf_subset, tags, self.known or [])
        if len(codes) > 1 and (task_metadata.name, hf_subset) not in self._warned:
            self._warned.add((task_metadata.name, hf_subset))
            warnings.warn(f"task {task_metadata.name!r}, subset {hf_subset!r} holds {', '.join(tags)}, and mteb does "
                          f"not say which text is in which: encoding all of them as {codes[0]!r}", stacklevel=3)
        return codes[0]

    # --- EncoderProtocol ------------------------------------------------------------------------
    def encode(self, inputs: Iterable[dict], *, task_metadata: Any, hf_split: str, hf_subset: str,
               prompt_type: Any | None = None,
               **kwargs) -> np.ndarray:
        """Every text of the DataLoader, in order: float32 (N, embed_dim). Prompts are not used."""
        lang = self.language_for(task_metadata, hf_subset)
        texts = []
        for batch in inputs:
            if "text" not in batch:
                raise TypeError(f"task {task_metadata.name!r} gives {sorted(batch)}: bridge models only encode text")
            texts.extend(batch["text"])
        logger.debug("%s/%s/%s: %d texts as %r", task_metadata.name, hf_subset, hf_split, len(texts), lang)
        vectors = self.encoder.encode(texts, lang, heads=self.heads,
                                      batch_size=self.batch_size or kwargs.get("batch_size") or 64,
                                      normalize=self.normalize, show_progress_bar=kwargs.get("show_progress_bar"))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.embed_dim)  # (N, embed_dim)

    def similarity(self, embeddings1: np.ndarray, embeddings2: np.ndarray) -> torch.Tensor:
        from mteb.similarity_functions import cos_sim

        return cos_sim(embeddings1, embeddings2)  # (N1, N2)

    def similarity_pairwise(self, embeddings1: np.ndarray, embeddings2: np.ndarray) -> torch.Tensor:
        from mteb.similarity_functions import pairwise_cos_sim

        return pairwise_cos_sim(embeddings1, embeddings2)  # (N,)


def _load_from_meta(model_name: str, revision: str | None = None, *, source: str, **kwargs) -> BridgeMTEBEncoder:
    """`ModelMeta.load_model()` calls this with the meta's name; the checkpoint comes from `source`."""
    return BridgeMTEBEncoder(source, revision, **kwargs)


def bridge_model_meta(wrapper: BridgeMTEBEncoder, name: str | None = None, revision: str | None = None,
                      license: str | None = None, open_weights: bool = True) -> Any:
    """The mteb `ModelMeta` of a wrapped encoder: what is known from the model, None where unknown."""
    require_mteb()
    from mteb.models.model_meta import ModelMeta

    encoder = wrapper.encoder
    source = str(getattr(encoder, "source", "model"))
    if name is None:
        stem = Path(source).stem if Path(source).suffix else source
        name = "bridgeembed/" + re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("_")
    module = getattr(encoder, "model", None)  # the torch module, when the encoder exposes one
    params = list(module.parameters()) if module is not None else []
    embeddings = [m.weight for m in (module.modules() if module is not None else []) if type(m).__name__ == "Embedding"]
    config = getattr(encoder, "config", None)
    loadable = source != "model" and not source.startswith("untrained:")  # from_pretrained can rebuild it
    extra = {}  # non-default choices name the experiment, so mteb keeps their results apart
    if wrapper.heads != "mean":
        extra["heads"] = str(wrapper.heads)
    if wrapper.normalize:
        extra["normalize"] = "True"
    fields = dict(
        loader=_load_from_meta if loadable else None,
        loader_kwargs={"source": source, "heads": wrapper.heads, "languages": wrapper.language_map,
                       "normalize": wrapper.normalize, "batch_size": wrapper.batch_size} if loadable else {},
        name=name,
        revision=revision,
        release_date=None,
        languages=wrapper.mteb_languages() or None,
        n_parameters=sum(p.numel() for p in params) or None,
        n_embedding_parameters=sum(w.numel() for w in embeddings) or None,
        memory_usage_mb=round(sum(p.numel() * p.element_size() for p in params) / 2**20, 2) or None,
        max_tokens=getattr(getattr(config, "tokenizer", None), "max_len", None),
        embed_dim=wrapper.embed_dim,
        license=license,
        open_weights=open_weights,
        public_training_code=None,
        public_training_data=None,
        framework=["PyTorch"],
        similarity_fn_name="cosine",
        use_instructions=False,
        training_datasets=None,
        citation=CITATION,
        experiment_kwargs=extra or None,
    )
    # ModelMeta forbids unknown fields, and some of these came during 2.x (targeted: mteb 2.26)
    return ModelMeta(**{key: value for key, value in fields.items() if key in ModelMeta.model_fields})
